# The client against a real Gatepost: sends, errors, idempotency and every resource's round trip.
import uuid

import pytest

from conftest import event_of, eventually
from gatepost import (
    AuthenticationError,
    BadRequestError,
    ConflictError,
    Gatepost,
    NotFoundError,
    UnprocessableError,
)


def test_a_sandbox_send_is_accepted_then_on_its_timeline(sandbox: Gatepost) -> None:
    sent = sandbox.send({"to": "ann@example.com", "subject": "Hello", "html": "<p>Hi {{name}}</p>", "data": {"name": "Ann"}})
    assert sent["id"].startswith("msg_")
    assert sent["status"] == "queued" and sent["sandbox"] is True
    captured = eventually(lambda: event_of(sandbox, sent["id"], "email.sent"))
    assert captured["data"]["message_id"] == sent["id"]
    message = sandbox.get_message(sent["id"])
    assert (message["to"], message["subject"], message["status"]) == ("ann@example.com", "Hello", "sent")
    inbox = sandbox.get_sandbox_message(sent["id"])
    assert inbox["html"] == "<p>Hi Ann</p>"


def test_a_bad_key_raises_the_coded_authentication_error(url: str) -> None:
    with pytest.raises(AuthenticationError) as raised:
        Gatepost("gp_live_not-a-key", base_url=url).send({"to": "ann@example.com", "subject": "s", "html": "h"})
    assert (raised.value.status, raised.value.code) == (401, "invalid_api_key")
    assert raised.value.message


def test_refusals_carry_their_code_and_fields(sandbox: Gatepost) -> None:
    with pytest.raises(UnprocessableError) as refused:
        sandbox.send({"to": "ann@example.com", "subject": "s", "html": "h", "attachments": [{"filename": "a.txt"}]})  # type: ignore[typeddict-item]
    assert (refused.value.status, refused.value.code) == (422, "attachments_unsupported")
    with pytest.raises(BadRequestError) as invalid:
        sandbox.send({"to": "not an address", "subject": "s", "html": "h"})
    assert (invalid.value.status, invalid.value.code) == (400, "invalid_request")
    assert [d["field"] for d in invalid.value.details] == ["to"]


def test_the_same_idempotency_key_twice_gives_the_same_message(sandbox: Gatepost) -> None:
    key = f"py-{uuid.uuid4()}"
    email = {"to": "ann@example.com", "subject": "Once", "html": "<p>once</p>"}
    first = sandbox.send(email, idempotency_key=key)  # type: ignore[arg-type]
    second = sandbox.send(email, idempotency_key=key)  # type: ignore[arg-type]
    assert second["id"] == first["id"]
    assert sandbox.get_message(first["id"])["idempotency_key"] == key
    batch_key = f"py-{uuid.uuid4()}"
    emails = [{"to": "ann@example.com", "subject": "b1", "html": "1"}, {"to": "nope", "subject": "b2", "html": "2"}]
    batch = sandbox.send_batch(emails, idempotency_key=batch_key)  # type: ignore[arg-type]
    assert (batch["accepted"], batch["refused"]) == (1, 1)
    assert batch["results"][1]["error"]["code"] == "invalid_request"
    again = sandbox.send_batch(emails, idempotency_key=batch_key)  # type: ignore[arg-type]
    assert again["results"][0]["id"] == batch["results"][0]["id"] and again["results"][0]["replayed"] is True


def test_templates_round_trip(live: Gatepost, sandbox: Gatepost) -> None:
    slug = f"welcome-{uuid.uuid4().hex[:8]}"
    made = live.create_template({"slug": slug, "subject": "Welcome {{name}}", "html": "<p>Hi {{name}}</p>"})
    assert made["id"].startswith("tpl_") and made["slug"] == slug
    assert live.get_template(slug)["subject"] == "Welcome {{name}}"
    assert slug in [t["slug"] for t in live.list_templates()]
    assert live.update_template(slug, {"subject": "Hello {{name}}"})["subject"] == "Hello {{name}}"
    sent = sandbox.send({"to": "ann@example.com", "template": slug, "data": {"name": "Ann"}})
    assert eventually(lambda: sandbox.get_message(sent["id"])["subject"] == "Hello Ann")
    live.delete_template(slug)
    with pytest.raises(NotFoundError) as gone:
        live.get_template(slug)
    assert gone.value.code == "not_found"


def test_suppressions_round_trip(live: Gatepost, sandbox: Gatepost) -> None:
    address = f"sup-{uuid.uuid4().hex[:8]}@example.com"
    added = live.add_suppression(address, detail="asked to stop")
    assert (added["address"], added["reason"], added["detail"]) == (address, "manual", "asked to stop")
    assert live.get_suppression(address)["reason"] == "manual"
    assert address in [s["address"] for s in live.list_suppressions(limit=1000)["data"]]
    with pytest.raises(UnprocessableError) as suppressed:
        sandbox.send({"to": address, "subject": "s", "html": "h"})
    assert suppressed.value.code == "recipient_suppressed"
    live.delete_suppression(address)
    with pytest.raises(NotFoundError):
        live.get_suppression(address)
    assert sandbox.send({"to": address, "subject": "s", "html": "h"})["status"] == "queued"


def test_validation_answers_verdicts_and_refuses_an_empty_batch(live: Gatepost, sandbox: Gatepost) -> None:
    # The Gatepost under test asks DNS at a loopback port nothing listens on: a valid address is unknown.
    verdict = sandbox.validate("support@example.com")
    assert (verdict["result"], verdict["reasons"]) == ("unknown", ["dns_unavailable", "role_account"])
    assert verdict["checks"]["syntax"] is True and verdict["checks"]["mx"] is None
    results = live.validate_batch(['"ann@example.com', "x" * 300 + "@example.com"])
    assert [(r["result"], r["reasons"]) for r in results] == [
        ("undeliverable", ["unpaired_quote"]),
        ("undeliverable", ["address_too_long"]),
    ]
    with pytest.raises(BadRequestError) as refused:
        live.validate_batch([])
    assert refused.value.code == "invalid_request"


def test_webhooks_round_trip(live: Gatepost) -> None:
    # Port 9 (discard) answers nothing on loopback: each attempt fails and is listed.
    made = live.create_webhook("http://127.0.0.1:9/hooks", ["email.sent"])
    assert made["id"].startswith("whk_") and made["secret"].startswith("whsec_")
    assert made["id"] in [w["id"] for w in live.list_webhooks()]
    fetched = live.get_webhook(made["id"])
    assert "secret" not in fetched and fetched["events"] == ["email.sent"]
    event = live.test_webhook(made["id"])
    assert event["type"] == "webhook.test" and event["data"]["endpoint_id"] == made["id"]
    attempt = eventually(
        lambda: next((d for d in live.list_webhook_deliveries(made["id"]) if d["event_id"] == event["id"]), None)
    )
    assert attempt["event_type"] == "webhook.test" and attempt["result"] in ("retrying", "failed")
    changed = live.update_webhook(made["id"], events=["email.sent", "email.bounced"], enabled=False)
    assert (changed["events"], changed["enabled"], changed["disabled_reason"]) == (
        ["email.sent", "email.bounced"],
        False,
        "manual",
    )
    with pytest.raises(ConflictError) as disabled:
        live.test_webhook(made["id"])
    assert disabled.value.code == "webhook_disabled"
    rotated = live.rotate_webhook_secret(made["id"])
    assert rotated["secret"].startswith("whsec_") and rotated["secret"] != made["secret"]
    live.delete_webhook(made["id"])
    with pytest.raises(NotFoundError):
        live.get_webhook(made["id"])


def test_domains_round_trip_with_their_dns_records(live: Gatepost) -> None:
    name = f"py-{uuid.uuid4().hex[:8]}.example"
    made = live.create_domain(name)
    assert (made["name"], made["status"]) == (name, "pending")
    purposes = sorted(r["purpose"] for r in made["records"])
    assert purposes == ["dkim", "dkim", "dmarc", "inbound_mx", "return_path", "spf"]
    assert all(r["value"] and r["name"].endswith(name) for r in made["records"])
    assert live.get_domain(made["id"])["records"] == made["records"]
    assert made["id"] in [d["id"] for d in live.list_domains()]
    checked = live.verify_domain(made["id"])
    # Nothing is published for it: every record was looked up and not found.
    assert checked["status"] == "pending" and checked["checked_at"] is not None
    assert all(r["status"] == "failed" for r in checked["records"])
    live.delete_domain(made["id"])
    with pytest.raises(NotFoundError):
        live.get_domain(made["id"])


def test_a_tracking_host_is_named_at_creation_then_changed(live: Gatepost) -> None:
    name = f"py-{uuid.uuid4().hex[:8]}.example"
    made = live.create_domain(name, tracking_host=f"track.{name}")
    assert made["tracking_host"] == f"track.{name}"
    assert [r["type"] for r in made["records"] if r["purpose"] == "tracking"] == ["CNAME"]
    with pytest.raises(UnprocessableError) as elsewhere:
        live.set_tracking_host(made["id"], "track.elsewhere.example")
    assert elsewhere.value.code == "tracking_host_invalid"
    cleared = live.set_tracking_host(made["id"], None)
    assert cleared["tracking_host"] is None and "tracking" not in [r["purpose"] for r in cleared["records"]]
    live.delete_domain(made["id"])


def test_follow_yields_the_timeline_to_its_end_and_the_feed_answers_after_a_cursor(sandbox: Gatepost) -> None:
    start = sandbox.list_events()
    assert start["data"] == []
    sent = sandbox.send({"to": "feed@example.com", "subject": "Feed", "html": "<p>f</p>"})
    followed = [e["type"] for e in sandbox.follow(sent["id"], interval=0.1)]
    assert followed[0] == "message.accepted" and followed[-1] == "email.sent"
    cursor = start["cursor"]

    def sent_in_feed() -> object:
        nonlocal cursor
        page = sandbox.list_events(after=cursor, wait=5)
        cursor = page["cursor"]
        return next((e for e in page["data"] if e["data"].get("message_id") == sent["id"]), None)

    assert eventually(sent_in_feed)["type"] == "email.sent"


def test_a_tenant_without_bounces_has_a_closed_breaker_and_no_reports(live: Gatepost) -> None:
    # Other tests send live mail (before this one or not): none bounces or complains.
    reputation = live.get_reputation()
    window = reputation["window"]
    assert (reputation["status"], window["hard_bounces"], window["complaints"]) == ("closed", 0, 0)
    assert isinstance(reputation["domains"], list)
    assert all(isinstance(e["destination"], str) and e["waiting"] >= 0 for e in live.get_queue())
    assert live.list_reports(limit=10) == {"data": [], "next_cursor": None}


def test_inbound_routes_need_a_verified_domain_and_unknown_ones_are_not_found(live: Gatepost) -> None:
    with pytest.raises(UnprocessableError) as unverified:
        live.create_inbound_route("support@not-verified.example", action="store")
    assert unverified.value.code == "inbound_domain_not_verified"
    assert live.list_inbound_routes() == []
    with pytest.raises(NotFoundError):
        live.get_inbound_route("rte_nope")
    with pytest.raises(NotFoundError):
        live.update_inbound_route("rte_nope", {"action": "store"})
    assert live.list_inbound_messages()["data"] == []
    with pytest.raises(NotFoundError) as missing:
        live.get_inbound_message("inm_nope")
    assert missing.value.code == "not_found"
