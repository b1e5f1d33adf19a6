// The Gatepost Node.js SDK module: verifying webhook deliveries (webhooks.ts) and signed delivery
// receipts (receipts.ts), each usable alone.
export {
  computeSignature,
  DEFAULT_TOLERANCE_SECONDS,
  SIGNATURE_HEADER,
  verifyWebhook,
  WebhookVerificationError,
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
