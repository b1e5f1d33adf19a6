# frozen_string_literal: true

require "erb"
require "pathname"
require "set"
require "time"
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
  # A message in one of these has had its last delivery outcome.
  FINAL_STATUSES = %w[sent bounced].freeze

  # What a CSV import did: rows added and updated (by email), and those refused (the first 100
  # listed; refused_count counts them all).
  ImportReport = Struct.new(:added, :updated, :refused_count, :refused, keyword_init: true) do
    def self.of(answer)
      new(added: answer.fetch("added"), updated: answer.fetch("updated"), refused_count: answer.fetch("refused_count"),
          refused: answer.fetch("refused").map { |r| RefusedRow.new(row: r.fetch("row"), email: r.fetch("email"), reason: r.fetch("reason")) })
    end
  end

  # A row an import refused: its number (the header is row 1), its email and why.
  RefusedRow = Struct.new(:row, :email, :reason, keyword_init: true)

  # An attachment of a received message, downloaded: its filename as the message named it
  # (characters outside printable ASCII replaced by "_", nil when it had none), its content type
  # as Gatepost serves it, and its bytes (a binary String).
  InboundAttachment = Struct.new(:filename, :content_type, :content, keyword_init: true)

  class Client
    def initialize(api_key: ENV.fetch("GATEPOST_API_KEY", nil), base_url: ENV.fetch("GATEPOST_URL", "http://localhost:3000"),
                   timeout: 30, max_attempts: 3, **retry_options)
      @timeout = timeout
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

    # Yields each event of the message's timeline as it comes, the ones so far first, until the
    # message is sent or bounced (FINAL_STATUSES), reading it every `interval` seconds; without a
    # block, an Enumerator.
    def follow(id, interval: 1.0)
      return enum_for(:follow, id, interval: interval) unless block_given?

      seen = Set.new
      loop do
        message = get_message(id)
        message.fetch("events").each { |event| yield event if seen.add?(event["id"]) }
        return if FINAL_STATUSES.include?(message["status"])

        sleep interval
      end
    end

    # The tenant's lifecycle events after `after` (an earlier page's "cursor"; none: only what comes
    # next): {"data", "cursor"}. With `wait` (seconds, up to 25) Gatepost holds the request until an
    # event comes or the wait ends.
    def list_events(after: nil, wait: nil, limit: nil)
      # The wait is the server's: the read must outlast it.
      call(:list_events, query: { after: after, wait: wait, limit: limit }, timeout: [@timeout, (wait || 0) + 10].max)
    end

    # The signed delivery receipt of a delivered message (check it with Gatepost.verify_receipt).
    def get_receipt(id) = call(:get_receipt, id: id)

    # The operator's public keys (a JWK Set), which verify receipts.
    def get_jwks = call(:get_jwks)

    # Fetches the message's latest receipt and the operator's public keys, and verifies it
    # (Gatepost.verify_receipt): answers its claims.
    def verify_message_receipt(id) = Receipts.verify(get_receipt(id).fetch("jws"), get_jwks)

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

    # tracking_host: a host under the domain for tracked links (its CNAME is added to the records).
    def create_domain(name, tracking_host: nil) = call(:create_domain, body: { name: name, tracking_host: tracking_host }.compact)

    # Names the domain's tracking host, or none (nil); its CNAME is pending until the next verification.
    def set_tracking_host(id, tracking_host) = call(:update_domain, id: id, body: { tracking_host: tracking_host })
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

    # Deliverability: reports received, the reputation breakers, the queue

    # Bounces and complaints received at the return-path domains, newest first: one page.
    def list_reports(limit: nil, cursor: nil) = call(:list_reports, query: { limit: limit, cursor: cursor })
    # The tenant's reputation breaker and each sending domain's ("domains"), with the rates of the window.
    def get_reputation = call(:get_reputation)
    # The tenant's mail in the fair queue, per destination.
    def get_queue = call(:get_queue).fetch("data")

    # Inbound mail (docs/inbound.md)

    # Routes mail to `match` on a verified domain of the tenant (UnprocessableError
    # "inbound_domain_not_verified" otherwise): posted as email.inbound (action "webhook", the
    # default) or only kept ("store").
    def create_inbound_route(match, action: nil, endpoint_id: nil)
      call(:create_inbound_route, body: { match: match, action: action, endpoint_id: endpoint_id }.compact)
    end

    def list_inbound_routes = call(:list_inbound_routes).fetch("data")
    def get_inbound_route(id) = call(:get_inbound_route, id: id)
    # changes: match, action, endpoint_id (nil: every endpoint subscribed to email.inbound).
    def update_inbound_route(id, changes) = call(:update_inbound_route, id: id, body: changes)
    def delete_inbound_route(id) = call(:delete_inbound_route, id: id)
    # Mail the inbound MX received for the tenant, newest first: one page.
    def list_inbound_messages(limit: nil, cursor: nil) = call(:list_inbound_messages, query: { limit: limit, cursor: cursor })
    # A received message: its envelope and every field of its email.inbound payload.
    def get_inbound_message(id) = call(:get_inbound_message, id: id)
    # The received message byte for byte as the inbound MX took it (message/rfc822): a binary String.
    def get_inbound_raw(id) = call(:get_inbound_raw, id: id, download: true).body.b

    # Attachment n (from 0, in the order of the message's "attachments"), an InboundAttachment;
    # NotFoundError when the message has no such attachment.
    def get_inbound_attachment(id, n)
      res = call(:get_inbound_attachment, id: id, n: n, download: true)
      InboundAttachment.new(filename: res["Content-Disposition"].to_s[/filename="([^"]*)"/, 1],
                            content_type: res["Content-Type"] || "application/octet-stream", content: res.body.b)
    end

    # Audiences and their contacts (docs/broadcasts.md)

    def create_audience(name) = call(:create_audience, body: { name: name })
    def list_audiences = call(:list_audiences).fetch("data")
    def get_audience(id) = call(:get_audience, id: id)
    # Deletes the audience and its contacts.
    def delete_audience(id) = call(:delete_audience, id: id)

    # Raises ConflictError "contact_exists" when the audience has the email already.
    def add_contact(audience_id, email:, name: nil, data: nil, unsubscribed: nil)
      call(:add_contact, id: audience_id, body: { email: email, name: name, data: data, unsubscribed: unsubscribed }.compact)
    end

    # One page (up to 1,000), by id, {"data", "next_cursor"}: pass next_cursor back for the next.
    def list_contacts(audience_id, limit: nil, cursor: nil)
      call(:list_contacts, id: audience_id, query: { limit: limit, cursor: cursor })
    end

    # Yields every contact of the audience, by id, reading a page of page_size at a time; without a
    # block, an Enumerator.
    def each_contact(audience_id, page_size: nil, &block)
      return enum_for(:each_contact, audience_id, page_size: page_size) unless block

      cursor = nil
      loop do
        page = list_contacts(audience_id, limit: page_size, cursor: cursor)
        page.fetch("data").each(&block)
        return if (cursor = page["next_cursor"]).nil?
      end
    end

    # By the contact's id (con_…) or its email.
    def get_contact(audience_id, contact) = call(:get_contact, id: audience_id, contact: contact)

    # Changes the fields given (a Hash): name nil clears it, data is replaced whole.
    def update_contact(audience_id, contact, changes) = call(:update_contact, id: audience_id, contact: contact, body: changes)
    def remove_contact(audience_id, contact) = call(:remove_contact, id: audience_id, contact: contact)

    # Imports a CSV file (a header row naming email, then name, unsubscribed and any data columns):
    # a Pathname (opened and streamed from disk), an IO (a File, a StringIO, a pipe), or a String
    # holding the file. Answers an ImportReport; a file that cannot be read raises
    # UnprocessableError "csv_invalid", and nothing is imported.
    def import_contacts(audience_id, csv)
      return csv.open("rb") { |file| import_contacts(audience_id, file) } if csv.is_a?(Pathname)

      ImportReport.of(call(:import_contacts, id: audience_id, body: Upload.new("text/csv", csv)))
    end

    # Broadcasts (docs/broadcasts.md)

    # A draft to an audience (a Hash: name, audience_id, from, subject, html or template, text,
    # data, sandbox). NotFoundError for an audience that is not the tenant's, UnprocessableError
    # "template_not_found" for an unknown template.
    def create_broadcast(broadcast) = call(:create_broadcast, body: broadcast)
    # One page, newest first, {"data", "next_cursor"}: pass next_cursor back for the next.
    def list_broadcasts(limit: nil, cursor: nil) = call(:list_broadcasts, query: { limit: limit, cursor: cursor })
    # The broadcast with its "progress" (the fan-out's count) and "results" (its messages' events).
    def get_broadcast(id) = call(:get_broadcast, id: id)
    # Deletes a draft; ConflictError "broadcast_not_draft" once it has been sent (cancel it instead).
    def delete_broadcast(id) = call(:delete_broadcast, id: id)

    # Sends a draft now, or schedules it at send_at (a Time, or an ISO 8601 String; at most 30
    # days ahead). Not retried after a failure: a send that went through answers a second one
    # ConflictError "broadcast_already_sent".
    def send_broadcast(id, send_at: nil)
      send_at = send_at.utc.iso8601(3) if send_at.respond_to?(:utc)
      call(:send_broadcast, id: id, body: { send_at: send_at }.compact)
    end

    # Stops a scheduled, sending or paused broadcast: nobody not yet admitted is sent to.
    def cancel_broadcast(id) = call(:cancel_broadcast, id: id)

    # Automations and custom events (docs/automations.md)

    # Creates it, enabled (a Hash: name, audience_id, trigger, steps, sandbox); checked whole first
    # (UnprocessableError "automation_cycle", "automation_step_unknown", …): a refusal creates nothing.
    def create_automation(automation) = call(:create_automation, body: automation)
    # Every automation of the tenant, oldest first.
    def list_automations = call(:list_automations).fetch("data")
    def get_automation(id) = call(:get_automation, id: id)

    # Renames it, or disables it (enabled: false: its runs stop at their next step) or enables it again.
    def update_automation(id, name: nil, enabled: nil)
      call(:update_automation, id: id, body: { name: name, enabled: enabled }.compact)
    end

    # Deletes it and its list of runs; its runs stop at their next step.
    def delete_automation(id) = call(:delete_automation, id: id)

    # One page of its runs, newest first, {"data", "next_cursor"}.
    def list_automation_runs(id, limit: nil, cursor: nil)
      call(:list_automation_runs, id: id, query: { limit: limit, cursor: cursor })
    end

    # One run with its "timeline".
    def get_automation_run(id, run_id) = call(:get_automation_run, id: id, run: run_id)

    # A custom event about the contact `email`: starts a run of each enabled automation triggered
    # by `name` whose audience has the contact (NotFoundError "contact_not_found" when none has);
    # answers {"id", "runs"}. The same idempotency_key again starts nothing ("runs" is empty).
    def send_event(name, email, data: nil, idempotency_key: nil)
      call(:send_event, body: { name: name, email: email, data: data, idempotency_key: idempotency_key }.compact)
    end

    private

    def call(operation, body: nil, query: {}, headers: {}, timeout: @timeout, download: false, **path_params)
      method, template = Operations::TABLE.fetch(operation)
      path = template.gsub(/\{(\w+)\}/) { ERB::Util.url_encode(path_params.fetch(Regexp.last_match(1).to_sym).to_s) }
      given = query.compact
      path += "?#{URI.encode_www_form(given)}" unless given.empty?
      @transport.request(method, path, body: body, headers: headers, timeout: timeout, download: download)
    end

    def key_header(idempotency_key) = idempotency_key.nil? ? {} : { "Idempotency-Key" => idempotency_key }
  end
end
