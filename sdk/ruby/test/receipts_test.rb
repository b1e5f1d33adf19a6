# frozen_string_literal: true

# verify_receipt on real receipts: live sends through the test's SMTP relay, each receipt
# checked against the JWK Set Gatepost serves; changed, reordered or missing ones refused.
require_relative "test_helper"

class ReceiptsTest < Minitest::Test
  include GatepostTest

  def deliver(n)
    sent = live.send_email({ to: "receipt#{n}@example.com", subject: "Receipt #{n}", html: "<p>r</p>" })
    eventually(30) { live.get_message(sent["id"])["status"] == "sent" }
    sent["id"]
  end

  def reason(jws, jwks)
    assert_raises(Gatepost::ReceiptVerificationError) { Gatepost.verify_receipt(jws, jwks) }.reason
  end

  def b64(bytes) = Base64.urlsafe_encode64(bytes, padding: false)

  def test_a_real_receipt_verifies_and_a_changed_one_does_not
    first_id = deliver(1)
    second_id = deliver(2)
    jwks = live.get_jwks
    first = live.get_receipt(first_id)
    second = live.get_receipt(second_id)
    claims = Gatepost.verify_receipt(first["jws"], jwks)
    assert_equal claims, live.verify_message_receipt(first_id)
    assert_equal [first["id"], first_id, live.get_message(first_id)["message_id_header"]],
                 claims.values_at("id", "message_id", "message_id_header")
    assert_equal ["receipt1@example.com", 250], [claims["envelope"]["to"], claims["reply"]["code"]]
    # The two receipts chain.
    chain = Gatepost.verify_receipt_chain([first["jws"], second["jws"]], jwks)
    assert_equal chain[0]["seq"] + 1, chain[1]["seq"]
    assert_equal Gatepost::Receipts.receipt_hash(first["jws"]), chain[1]["prev"]
    reordered = assert_raises(Gatepost::ReceiptVerificationError) do
      Gatepost.verify_receipt_chain([second["jws"], first["jws"]], jwks)
    end
    assert_equal [:out_of_order, 1], [reordered.reason, reordered.index]

    header, payload, signature = first["jws"].split(".")
    forged = JSON.parse(Gatepost::Receipts.b64url(payload))
    forged["envelope"]["to"] = "someone-else@example.com"
    assert_equal :invalid_signature, reason("#{header}.#{b64(JSON.generate(forged))}.#{signature}", jwks)
    flipped = signature.dup
    flipped[10] = flipped[10] == "A" ? "B" : "A"
    assert_equal :invalid_signature, reason("#{header}.#{payload}.#{flipped}", jwks)
    assert_equal :unknown_key, reason(first["jws"], { "keys" => [] })
    assert_equal :malformed, reason("not.a.jws", jwks)
  end

  def test_the_documented_example_verifies
    doc = File.read(File.expand_path("../../../docs/receipts.md", __dir__))
    jws, jwks, payload = doc[doc.index("**An example**")..].scan(/```(?:json)?\n(.*)\n```/).flatten
    assert_equal JSON.parse(payload), Gatepost.verify_receipt(jws, JSON.parse(jwks))
  end
end
