# verify_receipt on real receipts: live sends through the test's SMTP relay, each receipt
# checked against the JWK Set Gatepost serves; changed, reordered or missing ones refused.
import base64
import json
import pathlib
import re

import pytest

from conftest import eventually
from gatepost import Gatepost, ReceiptVerificationError, receipt_hash, verify_receipt, verify_receipt_chain


def deliver(client: Gatepost, n: int) -> str:
    sent = client.send({"to": f"receipt{n}@example.com", "subject": f"Receipt {n}", "html": "<p>r</p>"})
    eventually(lambda: client.get_message(sent["id"])["status"] == "sent", 30)
    return sent["id"]


def reason(jws: str, jwks: dict) -> str:
    with pytest.raises(ReceiptVerificationError) as refused:
        verify_receipt(jws, jwks)
    return refused.value.reason


def test_a_real_receipt_verifies_and_a_changed_one_does_not(live: Gatepost) -> None:
    first_id, second_id = deliver(live, 1), deliver(live, 2)
    jwks = live.get_jwks()
    first, second = live.get_receipt(first_id), live.get_receipt(second_id)
    claims = verify_receipt(first["jws"], jwks)
    assert live.verify_message_receipt(first_id) == claims
    message = live.get_message(first_id)
    assert (claims["id"], claims["message_id"], claims["message_id_header"]) == (
        first["id"],
        first_id,
        message["message_id_header"],
    )
    assert claims["envelope"]["to"] == "receipt1@example.com" and claims["reply"]["code"] == 250
    # The two receipts chain.
    chain = verify_receipt_chain([first["jws"], second["jws"]], jwks)
    assert chain[1]["seq"] == chain[0]["seq"] + 1 and chain[1]["prev"] == receipt_hash(first["jws"])
    with pytest.raises(ReceiptVerificationError) as reordered:
        verify_receipt_chain([second["jws"], first["jws"]], jwks)
    assert reordered.value.reason == "out_of_order" and reordered.value.index == 1

    header, payload, signature = first["jws"].split(".")
    forged = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    forged["envelope"]["to"] = "someone-else@example.com"
    forged_payload = base64.urlsafe_b64encode(json.dumps(forged, separators=(",", ":")).encode()).rstrip(b"=").decode()
    assert reason(f"{header}.{forged_payload}.{signature}", jwks) == "invalid_signature"
    flipped = signature[:10] + ("A" if signature[10] != "A" else "B") + signature[11:]
    assert reason(f"{header}.{payload}.{flipped}", jwks) == "invalid_signature"
    assert reason(first["jws"], {"keys": []}) == "unknown_key"
    assert reason("not.a.jws", jwks) == "malformed"


def test_the_documented_example_verifies() -> None:
    doc = (pathlib.Path(__file__).parents[3] / "docs" / "receipts.md").read_text()
    jws, jwks, payload = re.findall(r"```(?:json)?\n(.*)\n```", doc[doc.index("**An example**") :])[:3]
    assert verify_receipt(jws, json.loads(jwks)) == json.loads(payload)
