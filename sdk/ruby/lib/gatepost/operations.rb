# frozen_string_literal: true

require "json"

module Gatepost
  # The one table of the API operations this SDK calls: every request the client makes names an
  # entry here (Client#call). Print it as JSON with
  #   ruby -Ilib -rgatepost/operations -e 'puts Gatepost::Operations.to_json'
  # and a test checks it against the served OpenAPI document. Paths are OpenAPI templates:
  # {name} stands for a path parameter.
  module Operations
    TABLE = {
      send_email: ["POST", "/v1/emails"],
      send_batch: ["POST", "/v1/emails/batch"],
      get_message: ["GET", "/v1/messages/{id}"],
      get_receipt: ["GET", "/v1/messages/{id}/receipt"],
      get_jwks: ["GET", "/.well-known/jwks.json"],
      validate: ["POST", "/v1/validate"],
      validate_batch: ["POST", "/v1/validate/batch"],
      create_template: ["POST", "/v1/templates"],
      list_templates: ["GET", "/v1/templates"],
      get_template: ["GET", "/v1/templates/{slug}"],
      update_template: ["PATCH", "/v1/templates/{slug}"],
      delete_template: ["DELETE", "/v1/templates/{slug}"],
      add_suppression: ["POST", "/v1/suppressions"],
      list_suppressions: ["GET", "/v1/suppressions"],
      get_suppression: ["GET", "/v1/suppressions/{address}"],
      delete_suppression: ["DELETE", "/v1/suppressions/{address}"],
      create_domain: ["POST", "/v1/domains"],
      list_domains: ["GET", "/v1/domains"],
      get_domain: ["GET", "/v1/domains/{id}"],
      verify_domain: ["POST", "/v1/domains/{id}/verify"],
      update_domain: ["PATCH", "/v1/domains/{id}"],
      delete_domain: ["DELETE", "/v1/domains/{id}"],
      create_webhook: ["POST", "/v1/webhooks"],
      list_webhooks: ["GET", "/v1/webhooks"],
      get_webhook: ["GET", "/v1/webhooks/{id}"],
      update_webhook: ["PATCH", "/v1/webhooks/{id}"],
      delete_webhook: ["DELETE", "/v1/webhooks/{id}"],
      rotate_webhook_secret: ["POST", "/v1/webhooks/{id}/rotate"],
      test_webhook: ["POST", "/v1/webhooks/{id}/test"],
      list_webhook_deliveries: ["GET", "/v1/webhooks/{id}/deliveries"],
      retry_webhook_delivery: ["POST", "/v1/webhooks/{id}/deliveries/{evt}/retry"],
      list_sandbox_messages: ["GET", "/v1/sandbox/messages"],
      get_sandbox_message: ["GET", "/v1/sandbox/messages/{id}"],
      list_events: ["GET", "/v1/events"],
      list_reports: ["GET", "/v1/reports"],
      get_reputation: ["GET", "/v1/reputation"],
      get_queue: ["GET", "/v1/queue"],
      create_inbound_route: ["POST", "/v1/inbound/routes"],
      list_inbound_routes: ["GET", "/v1/inbound/routes"],
      get_inbound_route: ["GET", "/v1/inbound/routes/{id}"],
      update_inbound_route: ["PATCH", "/v1/inbound/routes/{id}"],
      delete_inbound_route: ["DELETE", "/v1/inbound/routes/{id}"],
      list_inbound_messages: ["GET", "/v1/inbound/messages"],
      get_inbound_message: ["GET", "/v1/inbound/messages/{id}"],
      # Downloads: the answer is bytes, not JSON.
      get_inbound_raw: ["GET", "/v1/inbound/messages/{id}/raw"],
      get_inbound_attachment: ["GET", "/v1/inbound/messages/{id}/attachments/{n}"],
      create_audience: ["POST", "/v1/audiences"],
      list_audiences: ["GET", "/v1/audiences"],
      get_audience: ["GET", "/v1/audiences/{id}"],
      delete_audience: ["DELETE", "/v1/audiences/{id}"],
      add_contact: ["POST", "/v1/audiences/{id}/contacts"],
      list_contacts: ["GET", "/v1/audiences/{id}/contacts"],
      get_contact: ["GET", "/v1/audiences/{id}/contacts/{contact}"],
      update_contact: ["PATCH", "/v1/audiences/{id}/contacts/{contact}"],
      remove_contact: ["DELETE", "/v1/audiences/{id}/contacts/{contact}"],
      import_contacts: ["POST", "/v1/audiences/{id}/contacts/import"],
      create_broadcast: ["POST", "/v1/broadcasts"],
      list_broadcasts: ["GET", "/v1/broadcasts"],
      get_broadcast: ["GET", "/v1/broadcasts/{id}"],
      delete_broadcast: ["DELETE", "/v1/broadcasts/{id}"],
      send_broadcast: ["POST", "/v1/broadcasts/{id}/send"],
      cancel_broadcast: ["POST", "/v1/broadcasts/{id}/cancel"],
      create_automation: ["POST", "/v1/automations"],
      list_automations: ["GET", "/v1/automations"],
      get_automation: ["GET", "/v1/automations/{id}"],
      update_automation: ["PATCH", "/v1/automations/{id}"],
      delete_automation: ["DELETE", "/v1/automations/{id}"],
      list_automation_runs: ["GET", "/v1/automations/{id}/runs"],
      get_automation_run: ["GET", "/v1/automations/{id}/runs/{run}"],
      send_event: ["POST", "/v1/events"]
    }.freeze

    def self.to_json(*)
      JSON.pretty_generate(TABLE.map { |name, (method, path)| { name: name, method: method, path: path } })
    end
  end
end
