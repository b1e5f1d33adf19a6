# Broadcasts, automations run by a custom event, and received mail downloaded, against a real
# Gatepost (docs/broadcasts.md, docs/automations.md, docs/inbound.md).
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from gatepost import ConflictError, Gatepost, NotFoundError, UnprocessableError

from conftest import env, eventually


def test_a_sandbox_broadcast_reaches_each_contact_and_is_sent_once(live: Gatepost, sandbox: Gatepost) -> None:
    audience = live.create_audience("Python readers")
    live.add_contact(audience["id"], "ann.py@example.com", name="Ann")
    live.add_contact(audience["id"], "bob.py@example.com", name="Bob")
    draft = live.create_broadcast(
        {
            "name": "Hello",
            "audience_id": audience["id"],
            "from": "News <news@shop.example>",
            "subject": "Hello from Python, {{name}}",
            "html": "<p>Hello {{name}}</p>",
            "sandbox": True,
        }
    )
    assert draft["id"].startswith("bro_") and (draft["status"], draft["progress"]) == ("draft", None)
    assert draft["id"] in [b["id"] for b in live.list_broadcasts(limit=10)["data"]]

    assert live.send_broadcast(draft["id"])["status"] in ("sending", "sent")
    done = eventually(lambda: (lambda b: b if b["status"] == "sent" and (b["results"] or {}).get("sent") == 2 else None)(live.get_broadcast(draft["id"])))
    assert done["progress"]["admitted"] == 2
    subjects = eventually(
        lambda: (lambda s: s if {"Hello from Python, Ann", "Hello from Python, Bob"} <= s else None)(
            {c["subject"] for c in sandbox.list_sandbox_messages(limit=50)["data"]}
        )
    )
    assert "Hello from Python, Ann" in subjects

    with pytest.raises(ConflictError) as again:
        live.send_broadcast(draft["id"])
    assert (again.value.status, again.value.code) == (409, "broadcast_already_sent")
    with pytest.raises(ConflictError) as not_draft:
        live.delete_broadcast(draft["id"])
    assert not_draft.value.code == "broadcast_not_draft"


def test_a_broadcast_is_scheduled_cancelled_or_deleted_as_a_draft(live: Gatepost) -> None:
    audience = live.create_audience("Python later")
    live.add_contact(audience["id"], "cy.py@example.com")
    fields = {"name": "Later", "audience_id": audience["id"], "from": "news@shop.example", "subject": "s", "html": "h", "sandbox": True}
    later = live.create_broadcast(fields)  # type: ignore[arg-type]
    scheduled = live.send_broadcast(later["id"], send_at=datetime.now(timezone.utc) + timedelta(hours=1))
    assert (scheduled["status"], scheduled["send_at"] is not None) == ("scheduled", True)
    assert live.cancel_broadcast(later["id"])["status"] == "cancelled"
    past = live.create_broadcast(fields)  # type: ignore[arg-type]
    with pytest.raises(UnprocessableError) as out_of_range:
        live.send_broadcast(past["id"], send_at="2020-01-01T00:00:00Z")
    assert out_of_range.value.code == "send_at_out_of_range"
    live.delete_broadcast(past["id"])
    with pytest.raises(NotFoundError):
        live.get_broadcast(past["id"])


def test_a_custom_event_starts_an_automation_run_whose_timeline_is_read(live: Gatepost, sandbox: Gatepost) -> None:
    live.create_template({"slug": "py-automation", "subject": "On {{plan}}", "html": "<p>{{name}} is on {{plan}}</p>"})
    audience = live.create_audience("Python automation")
    live.add_contact(audience["id"], "dee.py@example.com", name="Dee")
    automation = live.create_automation(
        {
            "name": "Upgrade",
            "audience_id": audience["id"],
            "trigger": {"type": "custom_event", "name": "plan.upgraded"},
            "steps": [
                {"id": "pause", "type": "wait", "duration": "PT1S"},
                {"id": "hello", "type": "send", "template": "py-automation", "from": "Shop <hi@shop.example>"},
            ],
            "sandbox": True,
        }
    )
    assert automation["id"].startswith("aut_") and automation["enabled"] is True
    assert automation["steps"][0]["seconds"] == 1
    assert automation["id"] in [a["id"] for a in live.list_automations()]
    assert live.get_automation(automation["id"])["name"] == "Upgrade"

    posted = sandbox.send_event("plan.upgraded", "dee.py@example.com", data={"plan": "pro"}, idempotency_key="py-up-1")
    assert posted["id"].startswith("evt_") and len(posted["runs"]) == 1
    assert sandbox.send_event("plan.upgraded", "dee.py@example.com", idempotency_key="py-up-1")["runs"] == []
    run_id = posted["runs"][0]
    run = eventually(lambda: (lambda r: r if r["status"] == "completed" else None)(live.get_automation_run(automation["id"], run_id)))
    assert [e["type"] for e in run["timeline"]] == ["run.started", "step.waiting", "step.sent", "run.completed"]
    message_id = run["timeline"][2]["data"]["message_id"]
    # The run's send step admitted the message; its capture follows a moment later.
    def captured():
        try:
            return sandbox.get_sandbox_message(message_id)
        except NotFoundError:
            return None

    assert eventually(captured)["subject"] == "On pro"
    listed = eventually(lambda: live.list_automation_runs(automation["id"], limit=5)["data"] or None)
    assert listed[0]["id"] == run_id

    with pytest.raises(NotFoundError) as nobody:
        sandbox.send_event("plan.upgraded", "stranger@example.com")
    assert nobody.value.code == "contact_not_found"
    assert live.update_automation(automation["id"], enabled=False)["enabled"] is False
    live.delete_automation(automation["id"])
    with pytest.raises(NotFoundError):
        live.get_automation(automation["id"])


def test_a_received_message_downloads_byte_for_byte_with_its_attachment(receiver: Gatepost, live: Gatepost) -> None:
    message_id = env("GATEPOST_INBOUND_ID")
    assert receiver.get_inbound_raw(message_id) == Path(env("GATEPOST_INBOUND_EML")).read_bytes()
    attachment = receiver.get_inbound_attachment(message_id, 0)
    assert (attachment["filename"], attachment["content"]) == ("receipt.txt", b"Order 1042, paid.\n")
    assert attachment["content_type"].startswith("text/plain")
    with pytest.raises(NotFoundError):
        receiver.get_inbound_attachment(message_id, 1)
    # Another tenant's message is one that does not exist.
    with pytest.raises(NotFoundError):
        live.get_inbound_raw(message_id)
