# frozen_string_literal: true

# Broadcasts, automations run by a custom event, and received mail downloaded, against a real
# Gatepost (docs/broadcasts.md, docs/automations.md, docs/inbound.md).
require_relative "test_helper"

class BroadcastsTest < Minitest::Test
  include GatepostTest

  def test_a_sandbox_broadcast_reaches_each_contact_and_is_sent_once
    audience = live.create_audience("Ruby readers")
    live.add_contact(audience["id"], email: "ann.rb@example.com", name: "Ann")
    live.add_contact(audience["id"], email: "bob.rb@example.com", name: "Bob")
    draft = live.create_broadcast({ name: "Hello", audience_id: audience["id"], from: "News <news@shop.example>",
                                    subject: "Hello from Ruby, {{name}}", html: "<p>Hello {{name}}</p>", sandbox: true })
    assert_match(/\Abro_/, draft["id"])
    assert_equal ["draft", nil], [draft["status"], draft["progress"]]
    assert_includes live.list_broadcasts(limit: 10)["data"].map { |b| b["id"] }, draft["id"]

    assert_includes %w[sending sent], live.send_broadcast(draft["id"])["status"]
    done = eventually do
      b = live.get_broadcast(draft["id"])
      b if b["status"] == "sent" && b.dig("results", "sent") == 2
    end
    assert_equal 2, done.dig("progress", "admitted")
    wanted = ["Hello from Ruby, Ann", "Hello from Ruby, Bob"]
    eventually { (wanted - sandbox.list_sandbox_messages(limit: 50)["data"].map { |c| c["subject"] }).empty? }

    again = assert_raises(Gatepost::ConflictError) { live.send_broadcast(draft["id"]) }
    assert_equal [409, "broadcast_already_sent"], [again.status, again.code]
    assert_equal "broadcast_not_draft", assert_raises(Gatepost::ConflictError) { live.delete_broadcast(draft["id"]) }.code
  end

  def test_a_broadcast_is_scheduled_cancelled_or_deleted_as_a_draft
    audience = live.create_audience("Ruby later")
    live.add_contact(audience["id"], email: "cy.rb@example.com")
    fields = { name: "Later", audience_id: audience["id"], from: "news@shop.example", subject: "s", html: "h", sandbox: true }
    later = live.create_broadcast(fields)
    scheduled = live.send_broadcast(later["id"], send_at: Time.now + 3600)
    assert_equal "scheduled", scheduled["status"]
    refute_nil scheduled["send_at"]
    assert_equal "cancelled", live.cancel_broadcast(later["id"])["status"]
    past = live.create_broadcast(fields)
    out_of_range = assert_raises(Gatepost::UnprocessableError) { live.send_broadcast(past["id"], send_at: "2020-01-01T00:00:00Z") }
    assert_equal "send_at_out_of_range", out_of_range.code
    live.delete_broadcast(past["id"])
    assert_raises(Gatepost::NotFoundError) { live.get_broadcast(past["id"]) }
  end

  def test_a_custom_event_starts_an_automation_run_whose_timeline_is_read
    live.create_template({ slug: "rb-automation", subject: "On {{plan}}", html: "<p>{{name}} is on {{plan}}</p>" })
    audience = live.create_audience("Ruby automation")
    live.add_contact(audience["id"], email: "dee.rb@example.com", name: "Dee")
    automation = live.create_automation({
                                          name: "Upgrade", audience_id: audience["id"], sandbox: true,
                                          trigger: { type: "custom_event", name: "plan.upgraded" },
                                          steps: [{ id: "pause", type: "wait", duration: "PT1S" },
                                                  { id: "hello", type: "send", template: "rb-automation", from: "Shop <hi@shop.example>" }]
                                        })
    assert_match(/\Aaut_/, automation["id"])
    assert_equal [true, 1], [automation["enabled"], automation["steps"][0]["seconds"]]
    assert_includes live.list_automations.map { |a| a["id"] }, automation["id"]
    assert_equal "Upgrade", live.get_automation(automation["id"])["name"]

    posted = sandbox.send_event("plan.upgraded", "dee.rb@example.com", data: { plan: "pro" }, idempotency_key: "rb-up-1")
    assert_match(/\Aevt_/, posted["id"])
    assert_equal 1, posted["runs"].size
    assert_equal [], sandbox.send_event("plan.upgraded", "dee.rb@example.com", idempotency_key: "rb-up-1")["runs"]
    run_id = posted["runs"][0]
    run = eventually do
      r = live.get_automation_run(automation["id"], run_id)
      r if r["status"] == "completed"
    end
    assert_equal %w[run.started step.waiting step.sent run.completed], run["timeline"].map { |e| e["type"] }
    # The run's send step admitted the message; its capture follows a moment later.
    message_id = run["timeline"][2]["data"]["message_id"]
    captured = eventually do
      sandbox.get_sandbox_message(message_id)
    rescue Gatepost::NotFoundError
      nil
    end
    assert_equal "On pro", captured["subject"]
    listed = eventually { live.list_automation_runs(automation["id"], limit: 5)["data"].first }
    assert_equal run_id, listed["id"]

    nobody = assert_raises(Gatepost::NotFoundError) { sandbox.send_event("plan.upgraded", "stranger@example.com") }
    assert_equal "contact_not_found", nobody.code
    assert_equal false, live.update_automation(automation["id"], enabled: false)["enabled"]
    live.delete_automation(automation["id"])
    assert_raises(Gatepost::NotFoundError) { live.get_automation(automation["id"]) }
  end

  def test_a_received_message_downloads_byte_for_byte_with_its_attachment
    id = env("GATEPOST_INBOUND_ID")
    assert_equal File.binread(env("GATEPOST_INBOUND_EML")), receiver.get_inbound_raw(id)
    attachment = receiver.get_inbound_attachment(id, 0)
    assert_equal ["receipt.txt", "Order 1042, paid.\n".b], [attachment.filename, attachment.content]
    assert_match(%r{\Atext/plain}, attachment.content_type)
    assert_raises(Gatepost::NotFoundError) { receiver.get_inbound_attachment(id, 1) }
    # Another tenant's message is one that does not exist.
    assert_raises(Gatepost::NotFoundError) { live.get_inbound_raw(id) }
  end
end
