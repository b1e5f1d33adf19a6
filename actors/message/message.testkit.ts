// What the gate would hand MessageActor.admit for a plain send: for tests of the actor itself.
import type { AdmitArgs, AttemptOutcome } from './message.state.ts';

export const admitArgs = (over: Partial<AdmitArgs> = {}): AdmitArgs => ({
  tenant_id: 'ten_1',
  key_id: 'key_1',
  sandbox: false,
  stream: 'transactional',
  ingress: 'api',
  request_hash: 'h1',
  idempotency_key: null,
  tags: [],
  content: {
    from: 'a@sender.example',
    to: 'b@example.com',
    reply_to: null,
    subject: 's',
    html: '<p>h</p>',
    text: null,
    headers: {},
  },
  send_at: null,
  quota_limits: { per_second: null, per_day: null },
  ...over,
});

/** An attempt's outcome with no remote host behind it, `over` filling in what the test needs. */
export const attemptOutcome = (over: Partial<AttemptOutcome> & Pick<AttemptOutcome, 'attempt' | 'result'>): AttemptOutcome => ({
  smtp_code: null,
  enhanced_code: null,
  response: '',
  mx: null,
  ip: null,
  tls: null,
  connected_at: null,
  accepted_at: null,
  retry_at: null,
  ...over,
});
