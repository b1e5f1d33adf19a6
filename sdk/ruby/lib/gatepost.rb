# frozen_string_literal: true

# Gatepost's Ruby SDK: the API client (Gatepost::Client) and the offline helpers that check a
# webhook delivery (Gatepost.verify_webhook) and a signed delivery receipt (Gatepost.verify_receipt).
require_relative "gatepost/version"
require_relative "gatepost/errors"
require_relative "gatepost/operations"
require_relative "gatepost/transport"
require_relative "gatepost/client"
require_relative "gatepost/webhooks"
require_relative "gatepost/receipts"

module Gatepost
  WebhookVerificationError = Webhooks::VerificationError
  ReceiptVerificationError = Receipts::VerificationError

  # See Webhooks.verify.
  def self.verify_webhook(payload:, headers:, secret:, **options)
    Webhooks.verify(payload: payload, headers: headers, secret: secret, **options)
  end

  # See Receipts.verify.
  def self.verify_receipt(jws, jwks) = Receipts.verify(jws, jwks)

  # See Receipts.verify_chain.
  def self.verify_receipt_chain(receipts, jwks) = Receipts.verify_chain(receipts, jwks)
end
