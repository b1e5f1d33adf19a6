// An example for every operation of the OpenAPI document, by its operationId: what a client
// sends (the request body, or the path parameters or headers of a request without one) and what
// a success answers. openapi.swagger.ts puts them in the document; `npm run lint:openapi` checks
// each against its operation's schema, and openapi.test.ts that no operation is without one.

export interface OperationExamples {
  /** The request body. */
  body?: unknown;
  /** The body of the first 2xx answer that has one. */
  answer?: unknown;
  /** Path parameters, by name. */
  params?: Record<string, string>;
  /** Request headers a request without a body or parameters carries (documented, not validated). */
  headers?: Record<string, string>;
}

const AT = '2026-11-26T09:30:00.000Z';
const LATER = '2026-11-26T09:30:02.000Z';
const MSG = 'msg_06gz7d9k3m2q8r4t6v8x0y2a4c';
const TPL = 'tpl_06gz7d9k3m2q8r4t6v8x0y2a4d';
const DOM = 'dom_06gz7d9k3m2q8r4t6v8x0y2a4e';
const WHK = 'whk_06gz7d9k3m2q8r4t6v8x0y2a4f';
const EVT = 'evt_06gz7d9k3m2q8r4t6v8x0y2a4g';
const TEN = 'ten_06gz7d9k3m2q8r4t6v8x0y2a4h';
const KEY = 'key_06gz7d9k3m2q8r4t6v8x0y2a4j';
const RCP = 'rcp_06gz7d9k3m2q8r4t6v8x0y2a4k';
const JWS = 'eyJhbGciOiJFZERTQSIsImtpZCI6InJrXzEiLCJ0eXAiOiJnYXRlcG9zdC1yZWNlaXB0K2p3dCJ9.eyJtc2ciOiJtc2dfMDZneiJ9.c2lnbmF0dXJl';

const send = {
  from: 'Shop <orders@shop.example>',
  to: 'ann@example.com',
  subject: 'Your order {{order}}',
  html: '<p>Hi {{name}}, your order {{order}} is on its way.</p>',
  data: { name: 'Ann', order: 'A-1042' },
  idempotency_key: 'order-A-1042-shipped',
  tags: ['orders'],
};
const accepted = { id: MSG, status: 'queued', to: 'ann@example.com', created_at: AT, send_at: null, sandbox: false };

const quiet = { sample: 0, sent: 0, hard_bounces: 0, blocks: 0, complaints: 0, bounce_rate: 0, complaint_rate: 0, block_rate: 0 };
const breaker = {
  status: 'open',
  since: AT,
  reason: 'hard bounce rate 9.5 % over 200 deliveries (opens at 8 %)',
  window: {
    sample: 200,
    sent: 181,
    hard_bounces: 19,
    blocks: 0,
    complaints: 0,
    bounce_rate: 0.095,
    complaint_rate: 0,
    block_rate: 0,
  },
  half_open_at: '2026-11-26T10:30:00.000Z',
};
const reputation = { ...breaker, domains: [{ domain: 'shop.example', ...breaker }] };
const warming = {
  status: 'warming',
  day: 3,
  daily_cap: 98,
  window_cap: 5,
  used_today: 41,
  used_this_window: 5,
  next_window: '2026-11-26T10:00:00.000Z',
  frozen: false,
};

/** A source address's ramp: a domain's without `frozen`. */
const { frozen: _, ...sourceIp } = warming;

const template = {
  id: TPL,
  slug: 'order-shipped',
  name: 'Order shipped',
  subject: 'Your order {{order}}',
  html: '<p>Hi {{name}}, your order {{order}} is on its way.</p>',
  text: null,
  from: 'Shop <orders@shop.example>',
  to: null,
  reply_to: null,
  created_at: AT,
  updated_at: AT,
};

/** A hard bounce from a Postfix DSN, recorded on its message, and a message that could not be tied to one. */
const bounceReport = {
  id: 'rpt_06gz7d9k3m2q8r4t6v8x0y2a4m',
  rcpt: `b+${MSG}@bounces.shop.example`,
  mail_from: '',
  remote_address: '192.0.2.25',
  received_at: LATER,
  kind: 'dsn',
  outcome: 'recorded',
  message_id: MSG,
  reason: null,
  findings: {
    reporting_mta: 'mx1.example.net',
    recipients: [
      {
        recipient: 'ann@example.com',
        original_recipient: 'ann@example.com',
        action: 'failed',
        status: '5.1.1',
        smtp_code: 550,
        diagnostic: '550 5.1.1 <ann@example.com>: Recipient address rejected: User unknown',
        remote_mta: 'mail.example.com',
      },
    ],
    original: {
      message_id: `<${MSG}@shop.example>`,
      return_path: `b+${MSG}@bounces.shop.example`,
      from: 'Shop <orders@shop.example>',
      to: 'ann@example.com',
      subject: 'Your order A-1042',
    },
  },
  excerpt: null,
  size: 3120,
};
const unrecognisedReport = {
  id: 'rpt_06gz7d9k3m2q8r4t6v8x0y2a4n',
  rcpt: 'fbl@bounces.shop.example',
  mail_from: 'postmaster@isp.example',
  remote_address: '203.0.113.9',
  received_at: AT,
  kind: 'unknown',
  outcome: 'unrecognised',
  message_id: null,
  reason: 'neither a delivery status notification nor an abuse report, and no status code in its text',
  findings: {
    reason: 'neither a delivery status notification nor an abuse report, and no status code in its text',
    original: null,
  },
  excerpt: 'From: postmaster@isp.example\r\nSubject: Re: Your order\r\n\r\nPlease stop.',
  size: 71,
};

const inboxSummary = {
  id: MSG,
  key_id: KEY,
  from: 'orders@shop.example',
  to: 'ann@example.com',
  subject: 'Your order A-1042',
  captured_at: AT,
};

const suppression = { address: 'ann@example.com', reason: 'unsubscribe', detail: 'Asked by phone', created_at: AT };

const capture = {
  message_id: MSG,
  from: 'orders@shop.example',
  to: 'ann@example.com',
  subject: 'Your order A-1042',
  html: '<p>Hi Ann, your order A-1042 is on its way.</p>',
  text: 'Hi Ann, your order A-1042 is on its way.',
  headers: { 'message-id': `<${MSG}@shop.example>` },
  captured_at: AT,
  dkim: { d: 'shop.example', s: ['gp202611r', 'gp202611e'] },
};

const record = (purpose: string, type: string, name: string, value: string, required: boolean) => ({
  purpose,
  type,
  name,
  value,
  ...(type === 'MX' ? { priority: 10 } : {}),
  required,
  status: 'verified',
  found: [value],
  error: null,
});
const domain = {
  id: DOM,
  name: 'shop.example',
  status: 'verified',
  records: [
    record(
      'dkim',
      'TXT',
      'gp202611r._domainkey.shop.example',
      'v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA',
      true,
    ),
    record(
      'dkim',
      'TXT',
      'gp202611e._domainkey.shop.example',
      'v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=',
      true,
    ),
    record('spf', 'TXT', 'shop.example', 'v=spf1 include:_spf.mail.shop.example ~all', true),
    record('dmarc', 'TXT', '_dmarc.shop.example', 'v=DMARC1; p=none; adkim=r; aspf=r', false),
    record('return_path', 'MX', 'bounces.shop.example', 'mail.shop.example', false),
    record('inbound_mx', 'MX', 'shop.example', 'mail.shop.example', false),
    record('tracking', 'CNAME', 'track.shop.example', 'mail.shop.example', false),
  ],
  tracking_host: 'track.shop.example',
  checked_at: AT,
  verified_at: AT,
  created_at: AT,
  updated_at: AT,
};

const RTE = 'rte_06gz7d9k3m2q8r4t6v8x0y2a4m';
const INM = 'inm_06gz7d9k3m2q8r4t6v8x0y2a4n';
const AUD = 'aud_06gz7d9k3m2q8r4t6v8x0y2a4p';
const CON = 'con_06gz7d9k3m2q8r4t6v8x0y2a4q';
const audience = { id: AUD, name: 'Newsletter', contacts: 2480, created_at: AT };
const AUT = 'aut_06gz7d9k3m2q8r4t6v8x0y2a4r';
const RUN = 'run_06gz7d9k3m2q8r4t6v8x0y2a4s';
const WEEK_LATER = '2026-12-03T09:30:00.000Z';
const automationSteps = [
  { id: 'welcome', type: 'send', template: 'welcome', from: 'Shop <hello@shop.example>' },
  { id: 'pause', type: 'wait', duration: 'P7D' },
  { id: 'read', type: 'if', opened: 'welcome', then: 'end' },
  { id: 'nudge', type: 'send', template: 'welcome', from: 'Shop <hello@shop.example>', subject: 'Did you see this, {{name}}?' },
];
const automationCreate = {
  name: 'Welcome series',
  audience_id: AUD,
  trigger: { type: 'contact_added' },
  steps: automationSteps,
};
const automation = {
  id: AUT,
  ...automationCreate,
  steps: automationSteps.map((s) => (s.type === 'wait' ? { ...s, seconds: 604_800 } : s)),
  enabled: true,
  sandbox: false,
  created_at: AT,
  updated_at: AT,
};
const runListed = {
  id: RUN,
  automation_id: AUT,
  contact_id: 'con_06gz7d9k3m2q8r4t6v8x0y2a4q',
  email: 'ann@example.com',
  status: 'waiting',
  reason: null,
  started_at: AT,
  updated_at: LATER,
};
const contact = {
  id: CON,
  audience_id: AUD,
  email: 'ann@example.com',
  name: 'Ann',
  data: { plan: 'pro', city: 'Oslo' },
  unsubscribed: false,
  created_at: AT,
  updated_at: AT,
};
const BRO = 'bro_06gz7d9k3m2q8r4t6v8x0y2a4r';
const broadcastDraft = {
  id: BRO,
  name: 'Spring sale',
  audience_id: AUD,
  from: 'Shop <news@shop.example>',
  subject: 'Spring sale, {{name}}',
  html: '<p>Hi {{name}}, the sale starts today.</p><p><a href="{{unsubscribe_url}}">Unsubscribe</a></p>',
  text: null,
  template: null,
  data: { sale: 'spring' },
  sandbox: false,
  status: 'draft',
  send_at: null,
  created_at: AT,
  updated_at: AT,
  paused: null,
  progress: null,
  results: null,
};
const broadcastSending = {
  ...broadcastDraft,
  status: 'sending',
  updated_at: LATER,
  progress: { admitted: 1500, refused: { suppressed: 12, unsubscribed: 40, other: 0 }, started_at: LATER, finished_at: null },
  results: { sent: 1210, bounced: 9, opened: 402, clicked: 77, unsubscribed: 3, complained: 0 },
};
const { paused: _p, progress: _g, results: _r, ...broadcastListed } = broadcastDraft;
const inboundRoute = {
  id: RTE,
  match: 'support+*@shop.example',
  domain: 'shop.example',
  action: 'webhook',
  endpoint_id: null,
  created_at: AT,
  updated_at: AT,
};
const inboundAt = `https://mail.shop.example/v1/inbound/messages/${INM}`;
const inboundMessage = {
  id: INM,
  route_id: RTE,
  mail_from: 'ann@example.com',
  rcpt_to: ['support+1042@shop.example'],
  remote_address: '203.0.113.7',
  received_at: AT,
  size: 2841,
  header_message_id: '<b7c2@example.com>',
  date: AT,
  from: { address: 'ann@example.com', name: 'Ann' },
  to: [{ address: 'support+1042@shop.example', name: '' }],
  cc: [],
  reply_to: [],
  subject: 'Where is order A-1042?',
  text: 'Hello, my order has not arrived.',
  html: '<p>Hello, my order has not arrived.</p>',
  headers: [{ name: 'Subject', value: 'Where is order A-1042?' }],
  attachments: [
    {
      filename: 'receipt.pdf',
      content_type: 'application/pdf',
      size: 18211,
      content_id: null,
      url: `${inboundAt}/attachments/0`,
    },
  ],
  auth: {
    spf: { result: 'pass', domain: 'example.com' },
    dkim: [{ result: 'pass', domain: 'example.com', selector: 's1', aligned: true }],
    dmarc: { result: 'pass', domain: 'example.com', policy: 'none', alignment: { spf: 'example.com', dkim: 'example.com' } },
    arc: { result: 'none', instance: null },
  },
  raw_url: `${inboundAt}/raw`,
};

const webhook = {
  id: WHK,
  url: 'https://hooks.shop.example/gatepost',
  events: ['email.sent', 'email.bounced'],
  enabled: true,
  disabled_reason: null,
  disabled_at: null,
  previous_secret_expires_at: null,
  created_at: AT,
  updated_at: AT,
};

const tenant = {
  id: TEN,
  name: 'Shop',
  default_from: 'orders@shop.example',
  quota: { per_second: 10, per_day: 10000 },
  queue_weight: 1,
  created_at: AT,
};
const apiKey = {
  id: KEY,
  tenant_id: TEN,
  kind: 'public',
  scope: 'full_access',
  sandbox: false,
  name: 'Contact form',
  prefix: 'gp_public_3kq8',
  created_at: AT,
  revoked_at: null,
  allowed_origins: ['https://shop.example'],
  rate_limit: { per_key: 60, per_ip: 5 },
};

const postmarkSend = {
  From: 'orders@shop.example',
  To: 'ann@example.com',
  Subject: 'Your order A-1042',
  HtmlBody: '<p>Hi Ann, your order A-1042 is on its way.</p>',
  MessageStream: 'outbound',
};
const postmarkTemplated = {
  From: 'orders@shop.example',
  To: 'ann@example.com',
  TemplateAlias: 'order-shipped',
  TemplateModel: { name: 'Ann', order: 'A-1042' },
};
const postmarkAnswer = { ErrorCode: 0, Message: 'OK', MessageID: MSG, SubmittedAt: AT, To: 'ann@example.com' };

const mailgunAnswer = { id: `<${MSG}@shop.example>`, message: 'Queued. Thank you.' };

export const operationExamples: Record<string, OperationExamples> = {
  getHealthz: { answer: { status: 'ok' } },
  getOpenapiJson: { answer: { openapi: '3.1.0' } },
  getWellKnownJwksJson: {
    answer: { keys: [{ kid: 'rk_06gz7d9k', kty: 'OKP', crv: 'Ed25519', x: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo' }] },
  },

  postV1Emails: { body: send, answer: accepted },
  postV1EmailsBatch: {
    body: [
      send,
      { ...send, to: 'bob@example.com', idempotency_key: 'order-A-1043-shipped', data: { name: 'Bob', order: 'A-1043' } },
    ],
    answer: {
      results: [
        { ...accepted, index: 0, replayed: false },
        { index: 1, error: { code: 'recipient_suppressed', message: 'bob@example.com is on the suppression list.' } },
      ],
      accepted: 1,
      refused: 1,
    },
  },

  getV1MessagesId: {
    params: { id: MSG },
    answer: {
      id: MSG,
      status: 'sent',
      from: 'orders@shop.example',
      to: 'ann@example.com',
      subject: 'Your order A-1042',
      stream: 'transactional',
      sandbox: false,
      tags: ['orders'],
      idempotency_key: 'order-A-1042-shipped',
      message_id_header: `<${MSG}@shop.example>`,
      created_at: AT,
      send_at: null,
      events: [
        { id: EVT, type: 'message.queued', created_at: AT, data: {} },
        { id: 'evt_06gz7d9k3m2q8r4t6v8x0y2a4m', type: 'email.sent', created_at: LATER, data: { response: '250 2.0.0 OK' } },
      ],
    },
  },
  getV1MessagesIdReceipt: {
    params: { id: MSG },
    answer: { id: RCP, jws: JWS, receipts: [{ id: RCP, jws: JWS, domain: 'example.com' }] },
  },

  postV1Templates: {
    body: { slug: 'order-shipped', name: 'Order shipped', subject: template.subject, html: template.html, from: template.from },
    answer: template,
  },
  getV1Templates: { answer: { data: [template] } },
  getV1TemplatesSlug: { params: { slug: 'order-shipped' }, answer: template },
  patchV1TemplatesSlug: {
    params: { slug: 'order-shipped' },
    body: { subject: 'Order {{order}} has shipped' },
    answer: { ...template, subject: 'Order {{order}} has shipped', updated_at: LATER },
  },
  deleteV1TemplatesSlug: { params: { slug: 'order-shipped' } },

  getV1Suppressions: { answer: { data: [suppression], next_cursor: null } },
  postV1Suppressions: {
    body: { address: 'ann@example.com', reason: 'unsubscribe', detail: 'Asked by phone' },
    answer: suppression,
  },
  getV1SuppressionsAddress: { params: { address: 'ann@example.com' }, answer: suppression },
  deleteV1SuppressionsAddress: { params: { address: 'ann@example.com' } },

  postV1Validate: {
    body: { address: 'ann@gmial.com' },
    answer: {
      address: 'ann@gmial.com',
      result: 'risky',
      reasons: ['possible_typo'],
      checks: {
        syntax: true,
        domain: true,
        mx: true,
        null_mx: false,
        disposable: false,
        role: false,
        free_provider: false,
        suppressed: false,
      },
      suggestion: 'ann@gmail.com',
    },
  },
  postV1ValidateBatch: {
    body: { addresses: ['ann@example.com', '"ann@example.com'] },
    answer: {
      results: [
        {
          address: 'ann@example.com',
          result: 'deliverable',
          reasons: [],
          checks: {
            syntax: true,
            domain: true,
            mx: true,
            null_mx: false,
            disposable: false,
            role: false,
            free_provider: false,
            suppressed: false,
          },
          suggestion: null,
        },
        {
          address: '"ann@example.com',
          result: 'undeliverable',
          reasons: ['unpaired_quote'],
          checks: {
            syntax: false,
            domain: null,
            mx: null,
            null_mx: null,
            disposable: null,
            role: null,
            free_provider: null,
            suppressed: null,
          },
          suggestion: null,
        },
      ],
    },
  },
  getV1Reports: { answer: { data: [bounceReport, unrecognisedReport], next_cursor: null } },
  getV1AdminReports: {
    answer: {
      data: [
        { ...bounceReport, tenant_id: TEN },
        { ...unrecognisedReport, tenant_id: TEN },
      ],
      next_cursor: null,
    },
  },

  getV1SandboxMessages: { answer: { data: [capture], next_cursor: null } },
  getV1SandboxMessagesId: { params: { id: MSG }, answer: capture },

  // The hosted capture inbox's JSON routes (ingress/inbox), with its session cookie.
  getInboxApiMessages: { answer: { data: [inboxSummary], next_cursor: null } },
  deleteInboxApiMessages: { answer: { deleted: 12 } },
  getInboxApiMessagesId: {
    params: { id: MSG },
    answer: {
      ...inboxSummary,
      text: 'Hi Ann, your order A-1042 is on its way.',
      headers: [
        { name: 'From', value: 'orders@shop.example' },
        { name: 'Subject', value: 'Your order A-1042' },
      ],
      links: [{ url: 'https://shop.example/orders/A-1042', text: 'your order' }],
      remote_content: false,
      html_url: `/inbox/api/messages/${MSG}/html`,
      raw_url: `/inbox/api/messages/${MSG}/raw`,
      dkim: { d: 'shop.example', s: ['gp202611r', 'gp202611e'] },
      status: 'captured',
      events: [{ id: EVT, type: 'email.captured', created_at: AT, data: {} }],
    },
  },
  deleteInboxApiMessagesId: { params: { id: MSG } },

  postV1Domains: {
    body: { name: 'shop.example', tracking_host: 'track.shop.example' },
    answer: {
      ...domain,
      status: 'pending',
      checked_at: null,
      verified_at: null,
      records: domain.records.map((r) => ({ ...r, status: 'pending', found: null })),
    },
  },
  getV1Domains: { answer: { data: [domain] } },
  getV1DomainsId: {
    params: { id: DOM },
    answer: {
      ...domain,
      warmup: {
        ...warming,
        providers: [
          { provider: 'google', daily_cap: 49, window_cap: 2, used_today: 26, used_this_window: 2 },
          { provider: 'microsoft', daily_cap: 49, window_cap: 2, used_today: 15, used_this_window: 2 },
        ],
      },
    },
  },
  patchV1DomainsId: {
    params: { id: DOM },
    body: { tracking_host: 'links.shop.example' },
    answer: {
      ...domain,
      tracking_host: 'links.shop.example',
      records: domain.records.map((r) =>
        r.purpose === 'tracking' ? { ...r, name: 'links.shop.example', status: 'pending', found: null } : r,
      ),
    },
  },
  deleteV1DomainsId: { params: { id: DOM } },
  postV1DomainsIdVerify: { params: { id: DOM }, answer: domain },

  postV1Automations: { body: automationCreate, answer: automation },
  getV1Automations: { answer: { data: [automation] } },
  getV1AutomationsId: { params: { id: AUT }, answer: automation },
  patchV1AutomationsId: {
    params: { id: AUT },
    body: { enabled: false },
    answer: { ...automation, enabled: false, updated_at: LATER },
  },
  deleteV1AutomationsId: { params: { id: AUT } },
  getV1AutomationsIdRuns: { params: { id: AUT }, answer: { data: [runListed], next_cursor: null } },
  getV1AutomationsIdRunsRun: {
    params: { id: AUT, run: RUN },
    answer: {
      ...runListed,
      trigger: { type: 'contact_added', event_id: 'con_06gz7d9k3m2q8r4t6v8x0y2a4q' },
      data: {},
      timeline: [
        { at: AT, type: 'run.started', step: null, data: { trigger: { type: 'contact_added', event_id: CON } } },
        { at: LATER, type: 'step.sent', step: 'welcome', data: { message_id: MSG } },
        { at: LATER, type: 'step.waiting', step: 'pause', data: { until: WEEK_LATER } },
      ],
    },
  },
  postV1Events: {
    body: { name: 'plan.upgraded', email: 'ann@example.com', data: { plan: 'pro' }, idempotency_key: 'upgrade-ann-42' },
    answer: { id: EVT, runs: [RUN] },
  },

  postV1Audiences: { body: { name: 'Newsletter' }, answer: { ...audience, contacts: 0 } },
  getV1Audiences: { answer: { data: [audience] } },
  getV1AudiencesId: { params: { id: AUD }, answer: audience },
  deleteV1AudiencesId: { params: { id: AUD } },
  postV1AudiencesIdContacts: {
    params: { id: AUD },
    body: { email: 'ann@example.com', name: 'Ann', data: { plan: 'pro', city: 'Oslo' } },
    answer: contact,
  },
  getV1AudiencesIdContacts: { params: { id: AUD }, answer: { data: [contact], next_cursor: null } },
  getV1AudiencesIdContactsContact: { params: { id: AUD, contact: 'ann@example.com' }, answer: contact },
  patchV1AudiencesIdContactsContact: {
    params: { id: AUD, contact: CON },
    body: { unsubscribed: true },
    answer: { ...contact, unsubscribed: true, updated_at: LATER },
  },
  deleteV1AudiencesIdContactsContact: { params: { id: AUD, contact: CON } },
  postV1Broadcasts: {
    body: {
      name: 'Spring sale',
      audience_id: AUD,
      from: 'Shop <news@shop.example>',
      subject: 'Spring sale, {{name}}',
      html: broadcastDraft.html,
      data: { sale: 'spring' },
    },
    answer: broadcastDraft,
  },
  getV1Broadcasts: { answer: { data: [broadcastListed], next_cursor: null } },
  getV1BroadcastsId: { params: { id: BRO }, answer: broadcastSending },
  deleteV1BroadcastsId: { params: { id: BRO } },
  postV1BroadcastsIdSend: {
    params: { id: BRO },
    body: { send_at: LATER },
    answer: {
      ...broadcastDraft,
      status: 'scheduled',
      send_at: LATER,
      progress: { admitted: 0, refused: { suppressed: 0, unsubscribed: 0, other: 0 }, started_at: null, finished_at: null },
      results: { sent: 0, bounced: 0, opened: 0, clicked: 0, unsubscribed: 0, complained: 0 },
    },
  },
  postV1BroadcastsIdCancel: {
    params: { id: BRO },
    answer: { ...broadcastSending, status: 'cancelled', progress: { ...broadcastSending.progress, finished_at: LATER } },
  },
  postV1AudiencesIdContactsImport: {
    params: { id: AUD },
    body: 'email,name,plan\nann@example.com,Ann,pro\nbob@example,Bob,free\ncy@example.com,Cy,free\n',
    answer: {
      added: 1,
      updated: 1,
      refused_count: 1,
      refused: [{ row: 3, email: 'bob@example', reason: 'not a valid email address' }],
    },
  },

  postV1InboundRoutes: { body: { match: 'support+*@shop.example' }, answer: inboundRoute },
  getV1InboundRoutes: { answer: { data: [inboundRoute] } },
  getV1InboundRoutesId: { params: { id: RTE }, answer: inboundRoute },
  patchV1InboundRoutesId: { params: { id: RTE }, body: { action: 'store' }, answer: { ...inboundRoute, action: 'store' } },
  deleteV1InboundRoutesId: { params: { id: RTE } },
  getV1InboundMessages: { answer: { data: [inboundMessage], next_cursor: null } },
  getV1InboundMessagesId: { params: { id: INM }, answer: inboundMessage },
  getV1InboundMessagesIdRaw: { params: { id: INM } },
  getV1InboundMessagesIdAttachmentsN: { params: { id: INM, n: '0' } },

  postV1Webhooks: {
    body: { url: webhook.url, events: webhook.events },
    answer: { ...webhook, secret: 'whsec_MfKQ9r0GKH8S3ZQ2ot7bSk1kDgh9IZH2' },
  },
  getV1Webhooks: { answer: { data: [webhook] } },
  getV1WebhooksId: { params: { id: WHK }, answer: webhook },
  patchV1WebhooksId: {
    params: { id: WHK },
    body: { enabled: false },
    answer: { ...webhook, enabled: false, disabled_reason: 'manual', disabled_at: LATER, updated_at: LATER },
  },
  deleteV1WebhooksId: { params: { id: WHK } },
  postV1WebhooksIdRotate: {
    params: { id: WHK },
    answer: { id: WHK, secret: 'whsec_Y2lQ3vQm1xB8Zp0Lr5Tn9Hk4Jd7Fs6Wa', previous_secret_expires_at: '2026-11-27T09:30:00.000Z' },
  },
  postV1WebhooksIdTest: {
    params: { id: WHK },
    answer: { event: { id: EVT, type: 'email.sent', created_at: AT, data: { test: true } } },
  },
  getV1WebhooksIdDeliveries: {
    params: { id: WHK },
    answer: {
      data: [
        {
          event_id: EVT,
          event_type: 'email.sent',
          attempt: 2,
          at: LATER,
          duration_ms: 84,
          status_code: 200,
          error: null,
          result: 'delivered',
          next_attempt_at: null,
        },
        {
          event_id: EVT,
          event_type: 'email.sent',
          attempt: 1,
          at: AT,
          duration_ms: 5000,
          status_code: null,
          error: 'timed out',
          result: 'retrying',
          next_attempt_at: LATER,
        },
      ],
    },
  },
  postV1WebhooksIdDeliveriesEvtRetry: { params: { id: WHK, evt: EVT }, answer: { event_id: EVT, status: 'pending' } },

  postV1AdminTenants: {
    body: { name: 'Shop', default_from: 'orders@shop.example', quota: { per_second: 10, per_day: 10000 } },
    answer: tenant,
  },
  getV1AdminTenants: { answer: { data: [tenant] } },
  getV1AdminTenantsId: { params: { id: TEN }, answer: tenant },
  patchV1AdminTenantsId: {
    params: { id: TEN },
    body: { quota: { per_second: 20, per_day: null }, queue_weight: 2 },
    answer: { ...tenant, quota: { per_second: 20, per_day: null }, queue_weight: 2 },
  },
  postV1AdminTenantsIdKeys: {
    params: { id: TEN },
    body: {
      kind: 'public',
      name: 'Contact form',
      allowed_origins: ['https://shop.example'],
      rate_limit: { per_key: 60, per_ip: 5 },
    },
    answer: { ...apiKey, key: 'gp_public_3kq8VnR2xL7pT4mW9cZ1bH6d' },
  },
  getV1AdminTenantsIdKeys: { params: { id: TEN }, answer: { data: [apiKey] } },
  patchV1AdminTenantsIdKeysKeyId: {
    params: { id: TEN, keyId: KEY },
    body: { allowed_origins: ['https://shop.example', 'https://www.shop.example'] },
    answer: { ...apiKey, allowed_origins: ['https://shop.example', 'https://www.shop.example'] },
  },
  deleteV1AdminTenantsIdKeysKeyId: { params: { id: TEN, keyId: KEY }, answer: { ...apiKey, revoked_at: LATER } },
  postV1AdminReceiptKeysRotate: { answer: { kid: 'rk_06gz7d9m' } },

  getV1Reputation: { answer: reputation },
  getV1Queue: {
    answer: { data: [{ tenant_id: TEN, destination: 'example.com', waiting: 12, in_flight: 5, oldest_age_seconds: 3.2 }] },
  },
  getV1AdminQueue: {
    answer: {
      data: [
        { tenant_id: TEN, destination: 'example.com', waiting: 0, in_flight: 1, oldest_age_seconds: 0 },
        {
          tenant_id: 'ten_06gz7d9p1b4c6e8g0j2k4m6n8q',
          destination: 'example.com',
          waiting: 48210,
          in_flight: 4,
          oldest_age_seconds: 611.5,
        },
      ],
    },
  },
  postV1AdminTenantsIdReputationReset: {
    params: { id: TEN },
    answer: {
      ...reputation,
      status: 'closed',
      reason: 'reset by the operator',
      since: LATER,
      half_open_at: null,
      window: quiet,
      domains: [
        {
          domain: 'shop.example',
          status: 'closed',
          reason: 'reset by the operator',
          since: LATER,
          half_open_at: null,
          window: quiet,
        },
      ],
    },
  },
  postV1AdminTenantsIdDomainsDomainIdWarmup: {
    params: { id: TEN, domain_id: DOM },
    body: { action: 'skip' },
    answer: {
      ...warming,
      status: 'warm',
      day: null,
      daily_cap: null,
      window_cap: null,
      used_today: 0,
      used_this_window: 0,
      next_window: null,
      providers: [],
    },
  },
  getV1AdminSourceIps: {
    answer: {
      data: [
        { ...sourceIp, ip: '203.0.113.10' },
        { ...sourceIp, ip: '203.0.113.11', used_today: 38, used_this_window: 4 },
      ],
    },
  },
  postV1AdminSourceIpsIpWarmup: {
    params: { ip: '203.0.113.10' },
    body: { action: 'restart', day: 1 },
    answer: { ...sourceIp, ip: '203.0.113.10', day: 1, daily_cap: 50, window_cap: 3, used_today: 0, used_this_window: 0 },
  },

  postEmail: { body: postmarkSend, answer: postmarkAnswer },
  postEmailWithTemplate: { body: postmarkTemplated, answer: postmarkAnswer },
  postEmailBatch: { body: [postmarkSend], answer: [postmarkAnswer] },
  postEmailBatchWithTemplates: { body: { Messages: [postmarkTemplated] }, answer: [postmarkAnswer] },

  postV3MailSend: {
    body: {
      personalizations: [{ to: [{ email: 'ann@example.com', name: 'Ann' }], dynamic_template_data: { name: 'Ann' } }],
      from: { email: 'orders@shop.example', name: 'Shop' },
      subject: 'Your order',
      content: [{ type: 'text/html', value: '<p>Your order is on its way.</p>' }],
    },
  },
  postV3DomainMessages: {
    body: {
      from: 'Shop <orders@shop.example>',
      to: ['ann@example.com'],
      subject: 'Your order',
      html: '<p>Your order is on its way.</p>',
    },
    answer: mailgunAnswer,
  },
  postV3DomainMessagesMime: {
    body: {
      to: ['ann@example.com'],
      message: 'From: orders@shop.example\r\nTo: ann@example.com\r\nSubject: Your order\r\n\r\nYour order is on its way.\r\n',
    },
    answer: mailgunAnswer,
  },

  optionsApiV10EmailSend: { headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' } },
  postApiV10EmailSend: {
    body: {
      lib_version: '4.4.1',
      user_id: 'gp_public_3kq8VnR2xL7pT4mW9cZ1bH6d',
      service_id: 'default_service',
      template_id: 'contact',
      template_params: { name: 'Ann', message: 'Hello' },
    },
    answer: 'OK',
  },
  optionsApiV10EmailSendForm: { headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' } },
  postApiV10EmailSendForm: {
    body: {
      lib_version: '4.4.1',
      user_id: 'gp_public_3kq8VnR2xL7pT4mW9cZ1bH6d',
      service_id: 'default_service',
      template_id: 'contact',
    },
    answer: 'OK',
  },
  optionsV1BrowserEmails: {
    headers: {
      origin: 'https://shop.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  },
  postV1BrowserEmails: {
    body: { template: 'contact', data: { name: 'Ann', message: 'Hello' } },
    answer: { ...accepted, to: 'desk@shop.example' },
  },
};
