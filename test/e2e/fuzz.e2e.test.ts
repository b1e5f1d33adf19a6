// Fuzzing every endpoint the served OpenAPI document lists, and the SMTP submission commands
// (issue 20, "Proof"): whatever a careless or hostile client sends, the answer is never a 5xx,
// always in Gatepost's error format (or, on a compatibility route, the provider's), and the
// process stays healthy. Endpoints come from /openapi.json, so a new one is fuzzed without
// editing this file. Bounded: a fixed number of runs per endpoint. A failure prints its seed and
// shrunk counterexample; GATEPOST_FUZZ_SEED=<seed> runs the same inputs again.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { errorCatalog } from '../../errors/errors.catalog.ts';
import { ADMIN_TOKEN, type HttpAnswer } from '../harness/gatepost.harness.ts';
import { gatepostWithRelay } from '../harness/suite.harness.ts';
import { dialog, submission } from '../harness/submission.harness.ts';

const suite = gatepostWithRelay();

/** Runs per endpoint and per SMTP property: enough to find the shallow faults, few enough to stay quick. */
const RUNS = 40;
/** A random seed unless one is given, to reproduce a failure: every failure of this file names it. */
const seed = process.env.GATEPOST_FUZZ_SEED ? Number(process.env.GATEPOST_FUZZ_SEED) : (Math.random() * 2 ** 31) | 0;

type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  format?: string;
  minItems?: number;
};
interface Operation {
  method: string;
  /** The path as the document names it, `{placeholders}` and all. */
  template: string;
  /** The tag, which tells whose error format the route answers in. */
  tag: string;
  admin: boolean;
  params: string[];
  /** The media type of the body and its schema, for routes that take one. */
  body: { type: string; schema: Schema } | null;
}

/**
 * Whose error format a route answers in, by the tag the document gives it (the browser bundle's
 * own send, under /v1/, answers as the native API does).
 */
type Style = 'native' | 'P' | 'S' | 'M' | 'browser';
const styleOf = ({ tag, template }: Pick<Operation, 'tag' | 'template'>): Style =>
  tag.startsWith('Style P')
    ? 'P'
    : tag.startsWith('Style S')
      ? 'S'
      : tag.startsWith('Style M')
        ? 'M'
        : tag.startsWith('Browser') && !template.startsWith('/v1/')
          ? 'browser'
          : 'native';

function operations(doc: { paths: Record<string, Record<string, any>> }): Operation[] {
  const ops: Operation[] = [];
  for (const [template, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      // A preflight carries no body and no key: nothing for a body fuzzer to vary.
      if (method === 'options') continue;
      const content = op.requestBody?.content as Record<string, { schema: Schema }> | undefined;
      const type = content && (Object.keys(content).find((t) => t.includes('json') || t.includes('urlencoded')) ?? null);
      ops.push({
        method: method.toUpperCase(),
        template,
        tag: op.tags?.[0] ?? '',
        admin: (op.security ?? []).some((s: Record<string, unknown>) => 'adminToken' in s),
        params: [...template.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
        body: content && type ? { type, schema: content[type]!.schema } : null,
      });
    }
  }
  return ops;
}

// Fields the sample leaves out: any value is refused (attachments), or they stand instead of
// others the sample fills (a template instead of subject and html), so a sample holding them
// would never pass the route's own checks.
const NOT_SAMPLED = new Set(['attachments', 'Attachments', 'template', 'TemplateAlias']);

/** A value that fits the schema, so the variations of it get past the first checks. */
function sample(schema: Schema, name = ''): unknown {
  const alt = schema.anyOf?.[0] ?? schema.oneOf?.[0];
  if (alt) return sample(alt, name);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((s) => sample(s, name)));
  if (schema.enum) return schema.enum[0];
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(schema.properties ?? {})) if (!NOT_SAMPLED.has(key)) out[key] = sample(sub, key);
      return out;
    }
    case 'array':
      return schema.items ? [sample(schema.items, name)] : [];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'date-time') return new Date(Date.now() + 3_600_000).toISOString();
      if (schema.format === 'uri' || /url/i.test(name)) return 'https://hooks.example.com/in';
      return /^(from|to|cc|bcc|reply_?to|email|address|h:reply-to)$/i.test(name) ? 'ann@example.com' : 'x';
    default:
      return 'x';
  }
}

/** Strings a parser or a renderer may choke on. */
const nasty = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    '{{#each x}}{{/each}}',
    '{{>p}}',
    '\r\nBcc: v@example.com',
    '\u0000',
    '\ud800',
    '../../etc/passwd',
    '%00',
    'a@b',
    '<script>',
    '',
  ),
  fc.integer({ min: 1, max: 70_000 }).map((n) => 'a'.repeat(n)),
);
const nastyNumber = fc.constantFrom(0, -1, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 31, 0.5, -0);
/** Arrays or objects nested deeper than any limit (text, since JSON.stringify would overflow on deep ones). */
const deep = fc
  .integer({ min: 30, max: 5000 })
  .chain((n) => fc.constantFrom('{"a":'.repeat(n) + '1' + '}'.repeat(n), '['.repeat(n) + ']'.repeat(n)));
const anyValue = fc.oneof(fc.jsonValue({ maxDepth: 4 }), nasty, nastyNumber, fc.constant(null));

/** Sets a key as a plain own property, so `__proto__` becomes a key in the JSON as a client would send it. */
const define = (o: object, key: string, value: unknown) =>
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });

/** A body as sent: its text, shown shortened in a counterexample (some are 100 kB). */
interface Body {
  text: string;
  [fc.toStringMethod]: () => string;
}
const body = (text: string): Body => ({
  text,
  [fc.toStringMethod]: () => `${JSON.stringify(text.slice(0, 400))}${text.length > 400 ? ` …(${text.length} chars)` : ''}`,
});

// Where a deep value goes: deep values stay text, as JSON.stringify itself would overflow on them.
const DEEP = '\u0000deep\u0000';

/** The fields as a JSON body, or as a urlencoded form; `deep` is written where DEEP stands. */
function written(fields: unknown, form: boolean, deep = ''): Body {
  if (!form) return body(JSON.stringify(fields).replace(JSON.stringify(DEEP), deep));
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields as Record<string, unknown>)) {
    for (const one of Array.isArray(v) ? v : [v]) {
      params.append(k, one === DEEP ? deep : typeof one === 'string' ? one : (JSON.stringify(one) ?? ''));
    }
  }
  return body(params.toString());
}

/**
 * A near-valid body: the sample itself, or with fields replaced, removed or added, a field nested
 * deeper than any limit, or not JSON at all. `form` writes the same fields as a urlencoded form.
 */
function bodies(base: unknown, form: boolean): fc.Arbitrary<Body> {
  const keys = base && typeof base === 'object' ? Object.keys(base) : [];
  const variation = fc
    .record({
      replace: fc.dictionary(keys.length ? fc.constantFrom(...keys) : nasty, anyValue, { maxKeys: 3 }),
      remove: fc.subarray(keys, { maxLength: Math.min(2, keys.length) }),
      extra: fc.dictionary(fc.oneof(nasty, fc.constantFrom('__proto__', 'constructor')), anyValue, { maxKeys: 2 }),
      deepAt: fc.option(keys.length ? fc.constantFrom(...keys) : fc.constant('x'), { freq: 6 }),
      deep,
    })
    .map(({ replace, remove, extra, deepAt, deep }) => {
      const fields: Record<string, unknown> = { ...(base as Record<string, unknown>) };
      for (const k of remove) delete fields[k];
      for (const [k, v] of Object.entries({ ...extra, ...replace })) define(fields, k, v);
      if (deepAt) define(fields, deepAt, DEEP);
      return written(fields, form, deep);
    });
  return fc.oneof(
    // The sample as it is: the route's own checks see a valid body, and a send goes through.
    { weight: 1, arbitrary: fc.constant(written(base, form)) },
    { weight: 6, arbitrary: variation },
    { weight: 1, arbitrary: fc.json({ maxDepth: 3 }).map(body) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 200 }).map(body) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('', '{', '{"a":1,}', 'null', '[]', '"x"', '{"__proto__":{"admin":true}}', '\ufeff{}', 'a=1&a=2&&=')
        .map(body),
    },
  );
}

const contentTypes = (type: string) =>
  fc.constantFrom(
    type,
    type,
    type,
    `${type}; charset=utf-8`,
    'text/plain',
    'application/json; charset=latin1',
    'application/x-www-form-urlencoded',
    'multipart/form-data',
    'application/xml',
    'application/json;;;',
    '*/*',
  );
const idempotencyKey = fc.option(
  fc.oneof(fc.string({ maxLength: 300 }), fc.constantFrom('k', ' ', 'a'.repeat(256), 'ключ', 'fuzz-replay')),
  {
    freq: 3,
  },
);
/**
 * A path parameter: usually a plausible id, sometimes anything (encoded, as a client library would).
 * Not `.` or `..`: a URL parser removes such a segment, `%2e` spelled or not, before the request
 * leaves the client, so the server sees another path, where a 404 in the native format is right.
 */
const param = fc.oneof(
  fc.constantFrom('msg_00000000000000000000000000', 'tpl_x', 'ann@example.com', 'x'),
  nasty.filter((s) => s.length > 0 && s.length < 2000 && s !== '.' && s !== '..'),
);

/** Every UTF-8 byte percent-encoded (encodeURIComponent throws on a lone surrogate; Buffer writes U+FFFD for it). */
const percentEncoded = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** Fails the test, with the answer, unless it is a non-5xx in the route's own error format. */
function checkAnswer(style: Style, what: string, res: HttpAnswer): void {
  const answer = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
  const shown = `${res.status} ${answer.slice(0, 400)} (${[...res.headers].join('; ').slice(0, 300)}) ← ${what.slice(0, 400)}`;
  expect(res.status, shown).toBeLessThan(500);
  if (res.status < 400) return;
  const body = res.body;
  const headerCode = res.headers.get('gatepost-error-code');
  switch (style) {
    case 'native':
      expect(body?.error?.code in errorCatalog, shown).toBe(true);
      expect(typeof body.error.message, shown).toBe('string');
      return;
    case 'P':
      expect(typeof body?.ErrorCode, shown).toBe('number');
      expect(typeof body.Message, shown).toBe('string');
      return;
    case 'S':
      expect(Array.isArray(body?.errors) && body.errors.length > 0, shown).toBe(true);
      for (const e of body.errors) expect(typeof e.message, shown).toBe('string');
      return;
    case 'M':
      // Mailgun answers a bad key with a plain-text "Forbidden"; everything else as {"message"}.
      if (res.status === 401) expect(body, shown).toBe('Forbidden');
      else expect(typeof body?.message, shown).toBe('string');
      return;
    case 'browser':
      // EmailJS answers in plain text; the code travels in a header.
      expect(typeof body, shown).toBe('string');
      expect(headerCode !== null && headerCode in errorCatalog, shown).toBe(true);
      return;
  }
}

/** The headers that authenticate a request on a route, as its clients send them (the inbox's: its session cookie). */
function auth(op: Operation, key: string, inboxCookie: string): Record<string, string> {
  if (op.admin) return { authorization: `Bearer ${ADMIN_TOKEN}` };
  if (op.tag === 'Capture inbox') return { cookie: inboxCookie };
  switch (styleOf(op)) {
    case 'P':
      return { 'x-postmark-server-token': key, accept: 'application/json' };
    case 'M':
      return { authorization: `Basic ${Buffer.from(`api:${key}`).toString('base64')}` };
    case 'browser':
      return {};
    default:
      return { authorization: `Bearer ${key}` };
  }
}

describe('every endpoint of the OpenAPI document', () => {
  it('answers whatever it is sent without a 5xx, in its own error format, and stays healthy', async () => {
    const doc = await suite.gp.request('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    const ops = operations(doc.body);
    // The document lists the native, admin and compatibility routes; a shrinking list is a bug of its own.
    expect(ops.filter((o) => o.body).length).toBeGreaterThan(15);
    // Admin routes act on a tenant of their own, so a fuzzed PATCH cannot revoke the keys in use.
    const other = await suite.gp.tenant();
    const { live, sandbox, publicKey } = suite.tenant;
    // Near-valid bodies must get through sometimes, or the sweep only ever tests the first check of a route.
    let accepted = 0;
    // The capture inbox's routes take a session, signed in to with the sandbox key.
    const signIn = await fetch(`${suite.gp.url}/inbox/session`, {
      method: 'POST',
      body: new URLSearchParams({ key: sandbox }),
      redirect: 'manual',
    });
    const inboxCookie = signIn.headers.get('set-cookie')?.split(';')[0] ?? '';
    expect(inboxCookie).toMatch(/^gatepost_inbox=/);

    for (const [index, op] of ops.entries()) {
      const style = styleOf(op);
      const base = op.body ? sample(op.body.schema) : undefined;
      if (base && typeof base === 'object' && 'user_id' in base) (base as Record<string, unknown>).user_id = publicKey;
      const request = fc.record({
        key: fc.constantFrom(live, sandbox),
        params: fc.tuple(...op.params.map((p) => (op.admin && p === 'id' ? fc.constant(other.id) : param))),
        body: op.body ? bodies(base, op.body.type.includes('urlencoded')) : fc.constant(undefined),
        contentType: op.body ? contentTypes(op.body.type) : fc.constant(undefined),
        idempotencyKey,
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ key, params, body, contentType, idempotencyKey }) => {
          let i = 0;
          const path = op.template.replace(/\{\w+\}/g, () => percentEncoded(params[i++]!));
          const headers: Record<string, string> = auth(op, key, inboxCookie);
          if (contentType) headers['content-type'] = contentType;
          if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey.replace(/[^\x20-\x7e]/g, '?');
          const sent = body?.text;
          const res = await suite.gp.request(op.method, path, { headers, body: sent });
          // The seed first: fast-check prints the route's own (seed + index), which alone reproduces nothing.
          const what = `(GATEPOST_FUZZ_SEED=${seed}) ${op.method} ${path} ${contentType ?? ''} ${String(sent).slice(0, 300)}`;
          checkAnswer(style, what, res);
          if (op.body && res.status < 300) accepted++;
        }),
        // A seed of each route's own, from the one printed: with one seed for all, every route
        // made the same choices, and a seed that never sent the valid sample sent it to none.
        { numRuns: RUNS, seed: seed + index },
      );
    }
    expect(accepted, `GATEPOST_FUZZ_SEED=${seed}`).toBeGreaterThan(0);
    expect((await suite.gp.request('GET', '/healthz')).status).toBe(200);
  }, 120_000); // some 1,800 requests: more than the default 60 s when two cores run other files too
});

/** A command a client might send, well-formed or not. */
const smtpCommand = fc.oneof(
  fc
    .tuple(fc.constantFrom('EHLO', 'HELO', 'ehlo', 'HeLo'), fc.oneof(fc.constantFrom('client.example', '[127.0.0.1]', ''), nasty))
    .map(([v, a]) => `${v} ${a}`),
  fc
    .oneof(
      fc.constantFrom('<a@sender.example>', '<>', '<a@sender.example> SIZE=99999999999', '<a@b> BODY=8BITMIME SMTPUTF8', 'a@b'),
      nasty,
    )
    .map((a) => `MAIL FROM:${a}`),
  fc.oneof(fc.constantFrom('<ann@example.com>', '<>', '<postmaster>', '<"a b"@example.com>'), nasty).map((a) => `RCPT TO:${a}`),
  fc.constantFrom(
    'DATA',
    'RSET',
    'NOOP',
    'HELP',
    'VRFY ann',
    'EXPN list',
    'STARTTLS',
    'AUTH PLAIN',
    'AUTH LOGIN',
    'AUTH CRAM-MD5',
    'AUTH XOAUTH2 x',
    'BDAT 10',
    '',
    ' ',
  ),
  fc.string({ unit: 'binary', maxLength: 60 }).map((s) => `AUTH PLAIN ${Buffer.from(s).toString('base64')}`),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.integer({ min: 1000, max: 20_000 }).map((n) => `NOOP ${'x'.repeat(n)}`),
);

/** Every line of an SMTP reply: three digits, then a space or a hyphen (RFC 5321 §4.2). */
const wellFormed = (reply: string) => reply.split('\r\n').every((line) => /^\d{3}([ -].*)?$/s.test(line));

/**
 * What `d.say(line)` answers: the reply, or null once the server has closed. A reply still
 * missing after 30 s fails naming the command and the seed, rather than leaving the test to time
 * out saying nothing of what hung.
 */
async function answer(d: Awaited<ReturnType<typeof dialog>>, line: string): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const hang = new Error(`no reply to ${JSON.stringify(line.slice(0, 200))} (GATEPOST_FUZZ_SEED=${seed})`);
      // Printed now too: shrinking may rerun hanging inputs past the test's timeout.
      console.error(hang.message);
      reject(hang);
    }, 30_000);
  });
  try {
    return await Promise.race([d.say(line), d.closed.then(() => null), hung]);
  } finally {
    clearTimeout(timer);
  }
}

describe('SMTP submission', () => {
  it('answers any sequence of commands with well-formed replies, and still takes a real submission after', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(smtpCommand, { minLength: 1, maxLength: 12 }), async (commands) => {
        const d = await dialog(suite.gp.smtpPort);
        try {
          let open = true;
          void d.closed.then(() => (open = false));
          for (const command of commands) {
            if (!open) break;
            // NUL, CR and LF would split the command or end it early: keep one command a line.
            const line = command.replace(/[\r\n]/g, ' ');
            const reply = await answer(d, line);
            if (reply === null) break;
            expect(wellFormed(reply), `${JSON.stringify(line.slice(0, 200))} → ${JSON.stringify(reply)}`).toBe(true);
            // After DATA is accepted, end the content so the next command is a command again.
            if (reply.startsWith('354')) {
              const end = await answer(d, 'Subject: fuzz\r\n\r\nbody\r\n.');
              if (end !== null) expect(wellFormed(end), JSON.stringify(end)).toBe(true);
            }
          }
        } finally {
          d.close();
        }
      }),
      { numRuns: RUNS, seed },
    );

    expect((await suite.gp.request('GET', '/healthz')).status).toBe(200);
    const info = await submission(suite.gp, suite.tenant.sandbox).sendMail({
      from: 'a@sender.example',
      to: 'after-fuzz@example.com',
      subject: 'after the fuzz',
      text: 'still here',
    });
    expect(info.response).toMatch(/^250 /);
  }, 120_000); // some 300 exchanges: more than the default 60 s when two cores run other files too
});
