// The Gatepost Node.js SDK module. So far: verifying webhook deliveries (webhooks.ts, usable alone).
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
