# frozen_string_literal: true

require "erb"
require "uri"
require_relative "operations"
require_relative "transport"

module Gatepost
  # A client for one API key: one method per entry of the operations table (operations.rb).
  # Answers are the API's JSON as Hashes with String keys; refusals raise Gatepost::APIError.
  #
  #   client = Gatepost::Client.new(api_key: ENV["GATEPOST_API_KEY"], base_url: "https://mail.example.com")
  #   client.send_email({ from: "App <app@example.com>", to: "ann@example.com", subject: "Hi", html: "<p>Hi</p>" })
  #
  # timeout bounds each connection, write and read, in seconds; max_attempts bounds the tries of
  # one call (transport.rb says which failures are retried).
  class Client
    def initialize(api_key: ENV.fetch("GATEPOST_API_KEY", nil), base_url: ENV.fetch("GATEPOST_URL", "http://localhost:3000"),
                   timeout: 30, max_attempts: 3, **retry_options)
      @transport = Transport.new(base_url: base_url, api_key: api_key, timeout: timeout, max_attempts: max_attempts,
                                 **retry_options)
    end

    # Sending and reading messages

    # Sends one email (202). A repeat with the same idempotency_key answers the first send.
    def send_email(email, idempotency_key: nil)
      call(:send_email, body: email, headers: key_header(idempotency_key))
    end

    # Sends up to 500 emails, each admitted or refused on its own; the key covers each item.
    def send_batch(emails, idempotency_key: nil)
      call(:send_batch, body: emails, headers: key_header(idempotency_key))
    end

    # A message, with its timeline under "events".
    def get_message(id) = call(:get_message, id: id)

    # The events of a message's timeline, oldest first.
    def timeline(id) = get_message(id).fetch("events")

    # The signed delivery receipt of a delivered message (check it with Gatepost.verify_receipt).
    def get_receipt(id) = call(:get_receipt, id: id)

    # The operator's public keys (a JWK Set), which verify receipts.
    def get_jwks = call(:get_jwks)

    # Address validation (docs/validate.md): an invalid address is a verdict, not an error.

    # The verdict on one address: "result", "reasons", "checks", "suggestion".
    def validate(address) = call(:validate, body: { address: address })

    # Up to 1,000 addresses: one verdict each, in order.
    def validate_batch(addresses) = call(:validate_batch, body: { addresses: addresses }).fetch("results")

    # Templates

    def create_template(template) = call(:create_template, body: template)
    def list_templates = call(:list_templates).fetch("data")
    def get_template(slug) = call(:get_template, slug: slug)
    def update_template(slug, changes) = call(:update_template, slug: slug, body: changes)
    def delete_template(slug) = call(:delete_template, slug: slug)

    # Suppressions

    def add_suppression(address, reason: "manual", detail: nil)
      call(:add_suppression, body: { address: address, reason: reason, detail: detail })
    end

    # One page, {"data", "next_cursor"}: pass next_cursor back for the next (nil after the last).
    def list_suppressions(limit: nil, cursor: nil) = call(:list_suppressions, query: { limit: limit, cursor: cursor })

    # The entry of a suppressed address; NotFoundError when it is not suppressed.
    def get_suppression(address) = call(:get_suppression, address: address)
    def delete_suppression(address) = call(:delete_suppression, address: address)

    # Sending domains: "records" are what to publish in DNS, and what the last look-up found.

    def create_domain(name) = call(:create_domain, body: { name: name })
    def list_domains = call(:list_domains).fetch("data")
    def get_domain(id) = call(:get_domain, id: id)
    def verify_domain(id) = call(:verify_domain, id: id)
    def delete_domain(id) = call(:delete_domain, id: id)

    # Webhooks

    # The answer's "secret" is shown this once: keep it to verify deliveries.
    def create_webhook(url:, events:) = call(:create_webhook, body: { url: url, events: events })
    def list_webhooks = call(:list_webhooks).fetch("data")
    def get_webhook(id) = call(:get_webhook, id: id)

    def update_webhook(id, url: nil, events: nil, enabled: nil)
      call(:update_webhook, id: id, body: { url: url, events: events, enabled: enabled }.compact)
    end

    def delete_webhook(id) = call(:delete_webhook, id: id)
    # A new secret (shown once); for 24 hours deliveries are signed with both.
    def rotate_webhook_secret(id) = call(:rotate_webhook_secret, id: id)
    # Sends a webhook.test event through the normal delivery path; answers it.
    def test_webhook(id) = call(:test_webhook, id: id).fetch("event")
    # The latest delivery attempts, newest first.
    def list_webhook_deliveries(id, limit: nil) = call(:list_webhook_deliveries, id: id, query: { limit: limit }).fetch("data")
    def retry_webhook_delivery(id, event_id) = call(:retry_webhook_delivery, id: id, evt: event_id)

    # The sandbox capture inbox

    def list_sandbox_messages(limit: nil, cursor: nil) = call(:list_sandbox_messages, query: { limit: limit, cursor: cursor })
    def get_sandbox_message(id) = call(:get_sandbox_message, id: id)

    private

    def call(operation, body: nil, query: {}, headers: {}, **path_params)
      method, template = Operations::TABLE.fetch(operation)
      path = template.gsub(/\{(\w+)\}/) { ERB::Util.url_encode(path_params.fetch(Regexp.last_match(1).to_sym).to_s) }
      given = query.compact
      path += "?#{URI.encode_www_form(given)}" unless given.empty?
      @transport.request(method, path, body: body, headers: headers)
    end

    def key_header(idempotency_key) = idempotency_key.nil? ? {} : { "Idempotency-Key" => idempotency_key }
  end
end
