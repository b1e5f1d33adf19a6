# verify_webhook on what Gatepost really delivers: a webhook pointed at a server of this test
# (the Gatepost under test lets loopback through its SSRF guard), a live send, its email.sent.
import json

import pytest

from conftest import eventually
from gatepost import Gatepost, WebhookVerificationError, compute_signature, verify_webhook
from local_server import Answer, local_server


def test_verify_webhook_accepts_a_real_delivery_and_refuses_a_tampered_or_stale_one(live: Gatepost) -> None:
    with local_server(lambda request, n: Answer(204)) as (url, received):
        hook = live.create_webhook(f"{url}/gatepost", ["email.sent"])
        try:
            sent = live.send({"to": "hooked@example.com", "subject": "Hooked", "html": "<p>h</p>"})
            delivery = eventually(
                lambda: next((r for r in received if json.loads(r.body)["data"].get("message_id") == sent["id"]), None),
                30,
            )
        finally:
            live.delete_webhook(hook["id"])
    event = verify_webhook(delivery.body, delivery.headers, hook["secret"])
    assert (event["type"], event["data"]["message_id"]) == ("email.sent", sent["id"])
    # Any of several secrets (a rotation), and the raw text as well as the bytes.
    assert verify_webhook(delivery.body.decode(), delivery.headers, ["whsec_old", hook["secret"]])["id"] == event["id"]

    def reason(payload: bytes, headers: dict[str, str], **kw: float) -> str:
        with pytest.raises(WebhookVerificationError) as refused:
            verify_webhook(payload, headers, hook["secret"], **kw)
        return refused.value.reason

    tampered = delivery.body.replace(sent["id"].encode(), b"msg_00000000000000000000000000")
    assert reason(tampered, delivery.headers) == "no_matching_signature"
    t = int(delivery.headers["x-service-signature"].split(",")[0][2:])
    assert reason(delivery.body, delivery.headers, now=t + 301) == "timestamp_out_of_tolerance"
    assert reason(delivery.body, delivery.headers, now=t - 301) == "timestamp_out_of_tolerance"
    # A stale delivery signed again with a fresh timestamp but the old signature does not pass either.
    resigned = {**delivery.headers, "x-service-signature": f"t={t + 1},v1={compute_signature(hook['secret'], t, delivery.body)}"}
    assert reason(delivery.body, resigned) == "no_matching_signature"
    assert reason(delivery.body, {}) == "missing_signature"
    with pytest.raises(WebhookVerificationError):
        verify_webhook(delivery.body, delivery.headers, "whsec_another")


def test_the_documented_signature_vector() -> None:
    payload = '{"id":"evt_01","type":"email.sent","created_at":"2025-11-21T00:00:00.000Z","data":{"message_id":"msg_01"}}'
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    hex_ = "bfa208a2905bc9f28aa5078ab83b81353775ecbf18fdc9a9fea53e5e5f4ea74a"
    assert compute_signature(secret, 1763683200, payload) == hex_
    # A WSGI environ names the header HTTP_X_SERVICE_SIGNATURE.
    environ = {"HTTP_X_SERVICE_SIGNATURE": f"t=1763683200,v1={hex_}"}
    assert verify_webhook(payload, environ, secret, now=1763683200 + 300)["id"] == "evt_01"
    for bad in [f"v1={hex_}", "t=1763683200", f"t=abc,v1={hex_}", "t=1763683200,v1=zz"]:
        with pytest.raises(WebhookVerificationError) as refused:
            verify_webhook(payload, {"X-Service-Signature": bad}, secret, now=1763683200)
        assert refused.value.reason == "malformed_signature"
