# frozen_string_literal: true

# verify_webhook on what Gatepost really delivers: a webhook pointed at a server of this test
# (the Gatepost under test lets loopback through its SSRF guard), a live send, its email.sent.
require_relative "test_helper"

class WebhookDeliveryTest < Minitest::Test
  include GatepostTest

  def reason(payload, headers, **options)
    error = assert_raises(Gatepost::WebhookVerificationError) do
      Gatepost.verify_webhook(payload: payload, headers: headers, secret: @secret, **options)
    end
    error.reason
  end

  def test_verify_webhook_accepts_a_real_delivery_and_refuses_a_tampered_or_stale_one
    sent = nil
    delivery = LocalServer.open(->(_request, _n) { LocalServer::Answer.new(204) }) do |server|
      hook = live.create_webhook(url: "#{server.url}/gatepost", events: ["email.sent"])
      @secret = hook["secret"]
      begin
        sent = live.send_email({ to: "hooked@example.com", subject: "Hooked", html: "<p>h</p>" })
        eventually(30) { server.received.find { |r| JSON.parse(r.body)["data"]["message_id"] == sent["id"] } }
      ensure
        live.delete_webhook(hook["id"])
      end
    end
    event = Gatepost.verify_webhook(payload: delivery.body, headers: delivery.headers, secret: @secret)
    assert_equal ["email.sent", sent["id"]], [event["type"], event["data"]["message_id"]]
    # Any of several secrets (a rotation).
    rotation = Gatepost.verify_webhook(payload: delivery.body, headers: delivery.headers, secret: ["whsec_old", @secret])
    assert_equal event["id"], rotation["id"]

    tampered = delivery.body.sub(sent["id"], "msg_00000000000000000000000000")
    assert_equal :no_matching_signature, reason(tampered, delivery.headers)
    t = Integer(delivery.headers["x-service-signature"][/\At=(\d+)/, 1])
    assert_equal :timestamp_out_of_tolerance, reason(delivery.body, delivery.headers, now: Time.at(t + 301))
    assert_equal :timestamp_out_of_tolerance, reason(delivery.body, delivery.headers, now: Time.at(t - 301))
    # A stale delivery given a fresh timestamp but its old signature does not pass either.
    old = Gatepost::Webhooks.compute_signature(@secret, t, delivery.body)
    assert_equal :no_matching_signature, reason(delivery.body, { "X-Service-Signature" => "t=#{t + 1},v1=#{old}" })
    assert_equal :missing_signature, reason(delivery.body, {})
    @secret = "whsec_another"
    assert_equal :no_matching_signature, reason(delivery.body, delivery.headers)
  end

  def test_the_documented_signature_vector
    payload = '{"id":"evt_01","type":"email.sent","created_at":"2025-11-21T00:00:00.000Z","data":{"message_id":"msg_01"}}'
    @secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    hex = "bfa208a2905bc9f28aa5078ab83b81353775ecbf18fdc9a9fea53e5e5f4ea74a"
    assert_equal hex, Gatepost::Webhooks.compute_signature(@secret, 1_763_683_200, payload)
    # A Rack env names the header HTTP_X_SERVICE_SIGNATURE.
    env = { "HTTP_X_SERVICE_SIGNATURE" => "t=1763683200,v1=#{hex}" }
    assert_equal "evt_01", Gatepost.verify_webhook(payload: payload, headers: env, secret: @secret,
                                                   now: Time.at(1_763_683_200 + 300))["id"]
    ["v1=#{hex}", "t=1763683200", "t=abc,v1=#{hex}", "t=1763683200,v1=zz"].each do |bad|
      assert_equal :malformed_signature, reason(payload, { "X-Service-Signature" => bad }, now: Time.at(1_763_683_200))
    end
  end
end
