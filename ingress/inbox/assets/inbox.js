// The capture inbox's page script: plain JavaScript, no build step, no library. It reads the
// inbox's JSON routes (/inbox/api/*) with the session cookie, listens for new captures on a
// server-sent event stream, and shows a message's html only in a sandboxed frame (no scripts,
// no forms, no same-origin) whose document the server serves under its own strict policy.
const api = '/inbox/api';
const state = { scope: 'key', q: '', cursor: null, selected: null, stream: null };
const $ = (id) => document.getElementById(id);
const list = $('messages');
const view = $('message');

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === 'text') node.textContent = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

async function call(path, init) {
  const res = await fetch(api + path, { credentials: 'same-origin', ...init });
  if (res.status === 401) return void location.assign('/inbox');
  if (!res.ok) {
    const body = await res.json().catch(() => null);
    throw Object.assign(new Error(body?.error?.message ?? res.statusText), { code: body?.error?.code ?? 'http_' + res.status });
  }
  return res.status === 204 ? null : res.json();
}

function showError(error) {
  const box = $('list-error');
  if (!error) return void (box.hidden = true);
  box.hidden = false;
  box.dataset.code = error.code;
  box.replaceChildren(el('code', { text: error.code }), ' ' + error.message);
}

const when = (iso) => new Date(iso).toLocaleString();

function row(m) {
  return el(
    'li',
    { 'data-id': m.id, class: m.id === state.selected ? 'selected' : '' },
    el(
      'button',
      { type: 'button', onclick: () => open(m.id) },
      el('span', { class: 'subject', text: m.subject || '(no subject)' }),
      el('span', { class: 'to', text: m.to }),
      el('time', { datetime: m.captured_at, text: when(m.captured_at) }),
    ),
  );
}

async function load(more = false) {
  const params = new URLSearchParams({ scope: state.scope, limit: '50' });
  if (state.q) params.set('q', state.q);
  if (more && state.cursor) params.set('cursor', state.cursor);
  try {
    const page = await call('/messages?' + params);
    showError(null);
    if (!more) list.replaceChildren();
    list.append(...page.data.map(row));
    state.cursor = page.next_cursor;
    $('more').hidden = !page.next_cursor;
    list.dataset.loaded = 'true';
  } catch (error) {
    showError(error);
  }
}

function listen() {
  state.stream?.close();
  $('live').dataset.live = 'off';
  const stream = new EventSource(`${api}/stream?scope=${state.scope}`);
  stream.addEventListener('open', () => ($('live').dataset.live = 'on'));
  stream.addEventListener('error', () => ($('live').dataset.live = 'off'));
  stream.addEventListener('capture', (event) => {
    const m = JSON.parse(event.data);
    // A search's results stay as they are; the newest first list takes the capture on top.
    if (state.q || list.querySelector(`li[data-id="${CSS.escape(m.id)}"]`)) return;
    list.prepend(row(m));
  });
  state.stream = stream;
}

const TABS = ['HTML', 'Text', 'Headers', 'Links', 'Source', 'Timeline'];

async function open(id) {
  state.selected = id;
  for (const li of list.children) li.classList.toggle('selected', li.dataset.id === id);
  let m;
  try {
    m = await call(`/messages/${encodeURIComponent(id)}`);
  } catch (error) {
    return showError(error);
  }
  const frame = el('iframe', {
    title: 'Message HTML',
    // No allow-scripts, no allow-same-origin, no allow-forms: the html can run nothing, post
    // nothing, and read nothing of the inbox; its links open in a new tab.
    sandbox: 'allow-popups allow-popups-to-escape-sandbox',
    src: m.html_url,
  });
  const images = m.remote_content
    ? el('button', {
        type: 'button',
        class: 'images',
        text: 'Load remote images',
        onclick: (e) => {
          frame.src = m.html_url + '?images=remote';
          e.target.remove();
        },
      })
    : null;
  const source = el('pre', { class: 'source' });
  const panels = {
    HTML: el('div', {}, images, frame),
    Text: el('pre', { class: 'text', text: m.text }),
    Headers: el(
      'table',
      { class: 'headers' },
      ...m.headers.map((h) => el('tr', {}, el('th', { text: h.name }), el('td', { text: h.value }))),
    ),
    Links: m.links.length
      ? el(
          'ol',
          { class: 'links' },
          ...m.links.map((l) =>
            el(
              'li',
              {},
              el('a', { href: l.url, target: '_blank', rel: 'noopener noreferrer', text: l.url }),
              l.text ? ' ' + l.text : '',
            ),
          ),
        )
      : el('p', { text: 'No links.' }),
    Source: el(
      'div',
      {},
      // Signed as delivery would sign it (its From domain is a verified domain of the tenant), or not.
      el('p', {
        class: 'dkim',
        text: m.dkim
          ? `DKIM-signed as it would be sent: d=${m.dkim.d}, s=${m.dkim.s.join(', ')}.`
          : 'Not DKIM-signed: its From domain is not a verified sending domain of this tenant.',
      }),
      el('a', { href: m.raw_url, download: `${m.id}.eml`, text: 'Download .eml' }),
      source,
    ),
    Timeline: m.events.length
      ? el(
          'ol',
          { class: 'timeline' },
          ...m.events.map((e) =>
            el(
              'li',
              { 'data-type': e.type },
              el('code', { text: e.type }),
              ' ',
              el('time', { datetime: e.created_at, text: when(e.created_at) }),
              // A delivery attempt's reply: for a capture, that it was captured and not delivered.
              typeof e.data?.response === 'string' ? el('span', { class: 'reply', text: e.data.response }) : null,
            ),
          ),
        )
      : el('p', { text: 'No timeline: the message’s retention has ended.' }),
  };
  const tabs = el('div', { class: 'tabs', role: 'tablist' });
  const show = (name) => {
    for (const [n, panel] of Object.entries(panels)) panel.hidden = n !== name;
    for (const b of tabs.children) b.setAttribute('aria-selected', String(b.textContent === name));
    if (name === 'Source' && !source.textContent)
      fetch(m.raw_url)
        .then((r) => r.text())
        .then((t) => (source.textContent = t));
  };
  tabs.append(...TABS.map((name) => el('button', { type: 'button', role: 'tab', text: name, onclick: () => show(name) })));
  view.replaceChildren(
    el(
      'header',
      {},
      el('h2', { text: m.subject || '(no subject)' }),
      el('button', { type: 'button', class: 'danger', text: 'Delete', onclick: () => remove(m.id) }),
    ),
    el(
      'dl',
      {},
      el('dt', { text: 'From' }),
      el('dd', { text: m.from }),
      el('dt', { text: 'To' }),
      el('dd', { text: m.to }),
      el('dt', { text: 'Captured' }),
      el('dd', { text: when(m.captured_at) }),
      el('dt', { text: 'Status' }),
      el('dd', { text: m.status ?? '—' }),
    ),
    tabs,
    ...Object.values(panels),
  );
  view.hidden = false;
  view.dataset.id = m.id;
  show('HTML');
}

async function remove(id) {
  try {
    await call(`/messages/${encodeURIComponent(id)}`, { method: 'DELETE' });
  } catch (error) {
    return showError(error);
  }
  list.querySelector(`li[data-id="${CSS.escape(id)}"]`)?.remove();
  if (state.selected === id) {
    view.hidden = true;
    state.selected = null;
  }
}

async function removeAll() {
  const whose = state.scope === 'key' ? 'this key' : 'the whole tenant';
  if (!confirm(`Delete every captured message of ${whose}?`)) return;
  try {
    await call(`/messages?scope=${state.scope}`, { method: 'DELETE' });
  } catch (error) {
    return showError(error);
  }
  view.hidden = true;
  await load();
}

for (const button of document.querySelectorAll('[data-scope]')) {
  button.addEventListener('click', () => {
    state.scope = button.dataset.scope;
    for (const b of document.querySelectorAll('[data-scope]')) b.setAttribute('aria-selected', String(b === button));
    listen();
    load();
  });
}
let typing;
$('search').addEventListener('input', (e) => {
  clearTimeout(typing);
  typing = setTimeout(() => {
    const q = e.target.value.trim();
    // The index finds three characters or more; fewer shows the whole inbox.
    state.q = q.length >= 3 ? q : '';
    load();
  }, 250);
});
$('more').addEventListener('click', () => load(true));
$('delete-all').addEventListener('click', removeAll);

listen();
load();
