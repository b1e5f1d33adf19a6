// The Gatepost Node.js SDK: the API client (client.ts), and the offline helpers, each usable
// alone: verifying webhook deliveries (webhooks.ts) and signed delivery receipts (receipts.ts).
export { FINAL_STATUSES, Gatepost, type FollowOptions } from './client.ts';
export { GatepostError, type ClientErrorCode } from './errors.ts';
export { OPERATIONS, type Operation, type OperationName } from './operations.ts';
export type { CallOptions, ClientOptions } from './transport.ts';
export type * from './types.ts';
export {
  computeSignature,
  DEFAULT_TOLERANCE_SECONDS,
  newSecret,
  SECRET_PREFIX,
  SIGNATURE_HEADER,
  signatureHeaders,
  verifyWebhook,
  WebhookVerificationError,
  type Signable,
  type VerificationFailure,
  type VerifyOptions,
  type WebhookEvent,
} from './webhooks.ts';
export {
  RECEIPT_TYP,
  receiptHash,
  ReceiptVerificationError,
  verifyReceipt,
  verifyReceiptChain,
  type ReceiptClaims,
  type ReceiptFailure,
} from './receipts.ts';
