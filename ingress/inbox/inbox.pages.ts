// The inbox's two HTML pages, written on the server: the sign-in form (with the coded error of a
// refused sign-in) and the shell the script (assets/inbox.js) fills from the inbox's JSON routes.
import type { GatepostError } from '../../errors/errors.catalog.ts';
import type { Sender } from '../../gate/gate.ts';

const escape = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The pages' own policy: their script and styles from the inbox's assets, captured html only in a frame of the inbox's. */
export const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const page = (title: string, body: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(title)}</title>
<link rel="stylesheet" href="/inbox/assets/inbox.css">
</head>
${body}
</html>
`;

export function signInPage(refusal: GatepostError | null): string {
  const alert = refusal
    ? `<p class="alert" role="alert" data-code="${refusal.code}"><code>${refusal.code}</code> ${escape(refusal.message)}</p>`
    : '';
  return page(
    'Sign in · Gatepost capture inbox',
    `<body class="signin">
<main>
<h1>Capture inbox</h1>
<p>Sign in with a sandbox key (<code>gp_sandbox_…</code>) to browse the messages it captured.</p>
${alert}
<form method="post" action="/inbox/session">
<label for="key">Sandbox key</label>
<input id="key" name="key" type="password" autocomplete="off" required maxlength="200">
<button type="submit">Sign in</button>
</form>
</main>
</body>`,
  );
}

export function inboxPage(sender: Sender): string {
  const { key, tenant } = sender;
  return page(
    'Gatepost capture inbox',
    `<body class="inbox">
<header>
<h1>Capture inbox</h1>
<span class="who">${escape(tenant.name)} · <code>${escape(key.prefix)}…</code>${key.name ? ` ${escape(key.name)}` : ''}</span>
<span id="live" class="live" data-live="off">live</span>
<form method="post" action="/inbox/session/end"><button type="submit">Sign out</button></form>
</header>
<nav>
<div class="scope" role="tablist">
<button type="button" data-scope="key" aria-selected="true">This key</button>
<button type="button" data-scope="tenant" aria-selected="false">Whole tenant</button>
</div>
<input id="search" type="search" placeholder="Search recipient, subject, text (3+ characters)" maxlength="200">
<button type="button" id="delete-all" class="danger">Delete all</button>
</nav>
<div class="panes">
<section class="list">
<p id="list-error" class="alert" role="alert" hidden></p>
<ul id="messages"></ul>
<button type="button" id="more" hidden>Older messages</button>
</section>
<section id="message" class="message" hidden></section>
</div>
<script type="module" src="/inbox/assets/inbox.js"></script>
</body>`,
  );
}
