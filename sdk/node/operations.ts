// Every HTTP operation the client calls: one table, so that a test can hold it against Gatepost's
// OpenAPI document (`GET /openapi.json`), where paths are written the same way (`{id}`).

export interface Operation {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  path: string;
  /**
   * Safe to send again after a 5xx, a timeout or a lost connection: it changes nothing twice
   * (a read, a delete, a verify), or carries an idempotency key the server honours (a send).
   * Any operation is retried after a 429, which Gatepost answers before doing anything.
   */
  retrySafe: boolean;
  /** A send: each call carries an Idempotency-Key, the same on every retry. */
  idempotent: boolean;
}

const op = (method: Operation['method'], path: string, retrySafe = method !== 'POST'): Operation => ({
  method,
  path,
  retrySafe,
  idempotent: false,
});

/** A send, retried under one idempotency key. */
const send = (path: string): Operation => ({ method: 'POST', path, retrySafe: true, idempotent: true });

export const OPERATIONS = {
  send: send('/v1/emails'),
  batch: send('/v1/emails/batch'),
  // With a public key, from a page: the browser bundle's one call (sdk/browser).
  browserSend: send('/v1/browser/emails'),
  getMessage: op('GET', '/v1/messages/{id}'),
  getReceipt: op('GET', '/v1/messages/{id}/receipt'),
  jwks: op('GET', '/.well-known/jwks.json'),
  listEvents: op('GET', '/v1/events'),
  postEvent: op('POST', '/v1/events'),

  // Reads: a validation changes nothing, so sending it again is safe.
  validate: op('POST', '/v1/validate', true),
  validateBatch: op('POST', '/v1/validate/batch', true),

  createTemplate: op('POST', '/v1/templates'),
  listTemplates: op('GET', '/v1/templates'),
  getTemplate: op('GET', '/v1/templates/{slug}'),
  updateTemplate: op('PATCH', '/v1/templates/{slug}'),
  deleteTemplate: op('DELETE', '/v1/templates/{slug}'),

  listSuppressions: op('GET', '/v1/suppressions'),
  // Adding an address that is suppressed already answers the suppression in force.
  addSuppression: op('POST', '/v1/suppressions', true),
  getSuppression: op('GET', '/v1/suppressions/{address}'),
  removeSuppression: op('DELETE', '/v1/suppressions/{address}'),

  createWebhook: op('POST', '/v1/webhooks'),
  listWebhooks: op('GET', '/v1/webhooks'),
  getWebhook: op('GET', '/v1/webhooks/{id}'),
  updateWebhook: op('PATCH', '/v1/webhooks/{id}'),
  deleteWebhook: op('DELETE', '/v1/webhooks/{id}'),
  rotateWebhookSecret: op('POST', '/v1/webhooks/{id}/rotate'),
  testWebhook: op('POST', '/v1/webhooks/{id}/test'),
  listWebhookDeliveries: op('GET', '/v1/webhooks/{id}/deliveries'),
  retryWebhookDelivery: op('POST', '/v1/webhooks/{id}/deliveries/{evt}/retry'),

  createDomain: op('POST', '/v1/domains'),
  listDomains: op('GET', '/v1/domains'),
  getDomain: op('GET', '/v1/domains/{id}'),
  updateDomain: op('PATCH', '/v1/domains/{id}'),
  verifyDomain: op('POST', '/v1/domains/{id}/verify', true),
  deleteDomain: op('DELETE', '/v1/domains/{id}'),

  createAudience: op('POST', '/v1/audiences'),
  listAudiences: op('GET', '/v1/audiences'),
  getAudience: op('GET', '/v1/audiences/{id}'),
  deleteAudience: op('DELETE', '/v1/audiences/{id}'),
  addContact: op('POST', '/v1/audiences/{id}/contacts'),
  listContacts: op('GET', '/v1/audiences/{id}/contacts'),
  getContact: op('GET', '/v1/audiences/{id}/contacts/{contact}'),
  updateContact: op('PATCH', '/v1/audiences/{id}/contacts/{contact}'),
  removeContact: op('DELETE', '/v1/audiences/{id}/contacts/{contact}'),
  importContacts: op('POST', '/v1/audiences/{id}/contacts/import'),
  createAutomation: op('POST', '/v1/automations'),
  listAutomations: op('GET', '/v1/automations'),
  getAutomation: op('GET', '/v1/automations/{id}'),
  updateAutomation: op('PATCH', '/v1/automations/{id}'),
  deleteAutomation: op('DELETE', '/v1/automations/{id}'),
  listAutomationRuns: op('GET', '/v1/automations/{id}/runs'),
  getAutomationRun: op('GET', '/v1/automations/{id}/runs/{run}'),

  createInboundRoute: op('POST', '/v1/inbound/routes'),
  listInboundRoutes: op('GET', '/v1/inbound/routes'),
  getInboundRoute: op('GET', '/v1/inbound/routes/{id}'),
  updateInboundRoute: op('PATCH', '/v1/inbound/routes/{id}'),
  deleteInboundRoute: op('DELETE', '/v1/inbound/routes/{id}'),
  listInboundMessages: op('GET', '/v1/inbound/messages'),
  getInboundMessage: op('GET', '/v1/inbound/messages/{id}'),
  // Downloads: the answer is bytes, not JSON (transport.ts `download`).
  getInboundRaw: op('GET', '/v1/inbound/messages/{id}/raw'),
  getInboundAttachment: op('GET', '/v1/inbound/messages/{id}/attachments/{n}'),

  getReputation: op('GET', '/v1/reputation'),
  getQueue: op('GET', '/v1/queue'),
  listReports: op('GET', '/v1/reports'),

  createBroadcast: op('POST', '/v1/broadcasts'),
  listBroadcasts: op('GET', '/v1/broadcasts'),
  getBroadcast: op('GET', '/v1/broadcasts/{id}'),
  deleteBroadcast: op('DELETE', '/v1/broadcasts/{id}'),
  // Not sent again by itself: a send that went through answers a retry 409 broadcast_already_sent.
  sendBroadcast: op('POST', '/v1/broadcasts/{id}/send'),
  cancelBroadcast: op('POST', '/v1/broadcasts/{id}/cancel'),

  listCaptures: op('GET', '/v1/sandbox/messages'),
  getCapture: op('GET', '/v1/sandbox/messages/{id}'),
} as const satisfies Record<string, Operation>;

export type OperationName = keyof typeof OPERATIONS;
