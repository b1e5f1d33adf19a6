# frozen_string_literal: true

# The client against a real Gatepost: sends, errors, idempotency and every resource's round trip.
require_relative "test_helper"

class ApiTest < Minitest::Test
  include GatepostTest

  def test_a_sandbox_send_is_accepted_then_on_its_timeline
    sent = sandbox.send_email({ to: "ann@example.com", subject: "Hello", html: "<p>Hi {{name}}</p>", data: { name: "Ann" } })
    assert_match(/\Amsg_/, sent["id"])
    assert_equal ["queued", true], [sent["status"], sent["sandbox"]]
    captured = eventually { event_of(sandbox, sent["id"], "email.sent") }
    assert_equal sent["id"], captured["data"]["message_id"]
    message = sandbox.get_message(sent["id"])
    assert_equal ["ann@example.com", "Hello", "sent"], message.values_at("to", "subject", "status")
    assert_equal "<p>Hi Ann</p>", sandbox.get_sandbox_message(sent["id"])["html"]
  end

  def test_a_bad_key_raises_the_coded_authentication_error
    error = assert_raises(Gatepost::AuthenticationError) do
      Gatepost::Client.new(api_key: "gp_live_not-a-key", base_url: url).send_email({ to: "ann@example.com", subject: "s", html: "h" })
    end
    assert_equal [401, "invalid_api_key"], [error.status, error.code]
    refute_empty error.api_message
  end

  def test_refusals_carry_their_code_and_fields
    refused = assert_raises(Gatepost::UnprocessableError) do
      sandbox.send_email({ to: "ann@example.com", subject: "s", html: "h", attachments: [{ filename: "a.txt" }] })
    end
    assert_equal [422, "attachments_unsupported"], [refused.status, refused.code]
    invalid = assert_raises(Gatepost::BadRequestError) { sandbox.send_email({ to: "not an address", subject: "s", html: "h" }) }
    assert_equal [400, "invalid_request"], [invalid.status, invalid.code]
    assert_equal ["to"], invalid.details.map { |d| d["field"] }
  end

  def test_the_same_idempotency_key_twice_gives_the_same_message
    key = "rb-#{SecureRandom.uuid}"
    email = { to: "ann@example.com", subject: "Once", html: "<p>once</p>" }
    first = sandbox.send_email(email, idempotency_key: key)
    assert_equal first["id"], sandbox.send_email(email, idempotency_key: key)["id"]
    assert_equal key, sandbox.get_message(first["id"])["idempotency_key"]
    batch_key = "rb-#{SecureRandom.uuid}"
    emails = [{ to: "ann@example.com", subject: "b1", html: "1" }, { to: "nope", subject: "b2", html: "2" }]
    batch = sandbox.send_batch(emails, idempotency_key: batch_key)
    assert_equal [1, 1], batch.values_at("accepted", "refused")
    assert_equal "invalid_request", batch["results"][1]["error"]["code"]
    again = sandbox.send_batch(emails, idempotency_key: batch_key)
    assert_equal [batch["results"][0]["id"], true], again["results"][0].values_at("id", "replayed")
  end

  def test_templates_round_trip
    slug = "welcome-#{SecureRandom.hex(4)}"
    made = live.create_template({ slug: slug, subject: "Welcome {{name}}", html: "<p>Hi {{name}}</p>" })
    assert_match(/\Atpl_/, made["id"])
    assert_equal "Welcome {{name}}", live.get_template(slug)["subject"]
    assert_includes live.list_templates.map { |t| t["slug"] }, slug
    assert_equal "Hello {{name}}", live.update_template(slug, { subject: "Hello {{name}}" })["subject"]
    sent = sandbox.send_email({ to: "ann@example.com", template: slug, data: { name: "Ann" } })
    eventually { sandbox.get_message(sent["id"])["subject"] == "Hello Ann" }
    assert_nil live.delete_template(slug)
    assert_equal "not_found", assert_raises(Gatepost::NotFoundError) { live.get_template(slug) }.code
  end

  def test_suppressions_round_trip
    address = "sup-#{SecureRandom.hex(4)}@example.com"
    added = live.add_suppression(address, detail: "asked to stop")
    assert_equal [address, "manual", "asked to stop"], added.values_at("address", "reason", "detail")
    assert_equal "manual", live.get_suppression(address)["reason"]
    assert_includes live.list_suppressions(limit: 1000)["data"].map { |s| s["address"] }, address
    refused = assert_raises(Gatepost::UnprocessableError) { sandbox.send_email({ to: address, subject: "s", html: "h" }) }
    assert_equal "recipient_suppressed", refused.code
    live.delete_suppression(address)
    assert_raises(Gatepost::NotFoundError) { live.get_suppression(address) }
    assert_equal "queued", sandbox.send_email({ to: address, subject: "s", html: "h" })["status"]
  end

  def test_validation_answers_verdicts_and_refuses_an_empty_batch
    # The Gatepost under test asks DNS at a loopback port nothing listens on: a valid address is unknown.
    verdict = sandbox.validate("support@example.com")
    assert_equal ["unknown", %w[dns_unavailable role_account]], verdict.values_at("result", "reasons")
    assert_equal [true, nil], verdict["checks"].values_at("syntax", "mx")
    results = live.validate_batch(['"ann@example.com', "#{"x" * 300}@example.com"])
    assert_equal [["undeliverable", ["unpaired_quote"]], ["undeliverable", ["address_too_long"]]],
                 results.map { |r| r.values_at("result", "reasons") }
    refused = assert_raises(Gatepost::BadRequestError) { live.validate_batch([]) }
    assert_equal "invalid_request", refused.code
  end

  def test_webhooks_round_trip
    # Port 9 (discard) answers nothing on loopback: each attempt fails and is listed.
    made = live.create_webhook(url: "http://127.0.0.1:9/hooks", events: ["email.sent"])
    assert_match(/\Awhk_/, made["id"])
    assert_match(/\Awhsec_/, made["secret"])
    assert_includes live.list_webhooks.map { |w| w["id"] }, made["id"]
    fetched = live.get_webhook(made["id"])
    refute fetched.key?("secret")
    event = live.test_webhook(made["id"])
    assert_equal ["webhook.test", made["id"]], [event["type"], event["data"]["endpoint_id"]]
    attempt = eventually { live.list_webhook_deliveries(made["id"]).find { |d| d["event_id"] == event["id"] } }
    assert_includes %w[retrying failed], attempt["result"]
    changed = live.update_webhook(made["id"], events: ["email.sent", "email.bounced"], enabled: false)
    assert_equal [["email.sent", "email.bounced"], false, "manual"], changed.values_at("events", "enabled", "disabled_reason")
    assert_equal "webhook_disabled", assert_raises(Gatepost::ConflictError) { live.test_webhook(made["id"]) }.code
    rotated = live.rotate_webhook_secret(made["id"])
    refute_equal made["secret"], rotated["secret"]
    live.delete_webhook(made["id"])
    assert_raises(Gatepost::NotFoundError) { live.get_webhook(made["id"]) }
  end

  def test_domains_round_trip_with_their_dns_records
    name = "rb-#{SecureRandom.hex(4)}.example"
    made = live.create_domain(name)
    assert_equal [name, "pending"], made.values_at("name", "status")
    assert_equal %w[dkim dkim dmarc inbound_mx return_path spf], made["records"].map { |r| r["purpose"] }.sort
    assert(made["records"].all? { |r| !r["value"].empty? && r["name"].end_with?(name) })
    assert_equal made["records"], live.get_domain(made["id"])["records"]
    assert_includes live.list_domains.map { |d| d["id"] }, made["id"]
    checked = live.verify_domain(made["id"])
    # Nothing is published for it: every record was looked up and not found.
    assert_equal "pending", checked["status"]
    refute_nil checked["checked_at"]
    assert(checked["records"].all? { |r| r["status"] == "failed" })
    live.delete_domain(made["id"])
    assert_raises(Gatepost::NotFoundError) { live.get_domain(made["id"]) }
  end

  def test_a_tracking_host_is_named_at_creation_then_changed
    name = "rb-#{SecureRandom.hex(4)}.example"
    made = live.create_domain(name, tracking_host: "track.#{name}")
    assert_equal "track.#{name}", made["tracking_host"]
    assert_equal ["CNAME"], made["records"].select { |r| r["purpose"] == "tracking" }.map { |r| r["type"] }
    elsewhere = assert_raises(Gatepost::UnprocessableError) { live.set_tracking_host(made["id"], "track.elsewhere.example") }
    assert_equal "tracking_host_invalid", elsewhere.code
    cleared = live.set_tracking_host(made["id"], nil)
    assert_nil cleared["tracking_host"]
    refute_includes cleared["records"].map { |r| r["purpose"] }, "tracking"
    live.delete_domain(made["id"])
  end

  def test_follow_yields_the_timeline_to_its_end_and_the_feed_answers_after_a_cursor
    start = sandbox.list_events
    assert_empty start["data"]
    sent = sandbox.send_email({ to: "feed@example.com", subject: "Feed", html: "<p>f</p>" })
    followed = sandbox.follow(sent["id"], interval: 0.1).map { |e| e["type"] }
    assert_equal ["message.accepted", "email.sent"], [followed.first, followed.last]
    cursor = start["cursor"]
    found = eventually do
      page = sandbox.list_events(after: cursor, wait: 5)
      cursor = page["cursor"]
      page["data"].find { |e| e["data"]["message_id"] == sent["id"] }
    end
    assert_equal "email.sent", found["type"]
  end

  def test_a_tenant_without_bounces_has_a_closed_breaker_and_no_reports
    # Other tests send live mail first or not (the order is random): none bounces or complains.
    reputation = live.get_reputation
    assert_equal ["closed", 0, 0], [reputation["status"], *reputation["window"].values_at("hard_bounces", "complaints")]
    assert_kind_of Array, reputation["domains"]
    # The tenant's own mail alone, per destination.
    assert_equal [], live.get_queue.reject { |entry| entry["destination"].is_a?(String) && entry["waiting"] >= 0 }
    assert_equal({ "data" => [], "next_cursor" => nil }, live.list_reports(limit: 10))
  end

  def test_inbound_routes_need_a_verified_domain_and_unknown_ones_are_not_found
    unverified = assert_raises(Gatepost::UnprocessableError) { live.create_inbound_route("support@not-verified.example", action: "store") }
    assert_equal "inbound_domain_not_verified", unverified.code
    assert_equal [], live.list_inbound_routes
    assert_raises(Gatepost::NotFoundError) { live.get_inbound_route("rte_nope") }
    assert_raises(Gatepost::NotFoundError) { live.update_inbound_route("rte_nope", { action: "store" }) }
    assert_equal [], live.list_inbound_messages["data"]
    assert_equal "not_found", assert_raises(Gatepost::NotFoundError) { live.get_inbound_message("inm_nope") }.code
  end
end
