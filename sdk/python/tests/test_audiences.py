# Audiences, contacts and the CSV import against a real Gatepost (docs/broadcasts.md).
import io
from pathlib import Path

import pytest

from gatepost import ConflictError, Gatepost, NotFoundError, UnprocessableError

CSV = (
    "email,name,plan\n"
    "ann@example.com,Ann Again,pro\n"  # a contact already: updated
    "bob@example.com,Bob,free\n"
    "not-an-address,Nobody,free\n"  # row 4: refused on its own
    "cid@example.com,,\n"
)


def test_an_audience_holds_contacts_paged_by_cursor_and_refuses_a_repeat(live: Gatepost) -> None:
    audience = live.create_audience("Newsletter")
    assert audience["id"].startswith("aud_") and (audience["name"], audience["contacts"]) == ("Newsletter", 0)
    assert audience["id"] in [a["id"] for a in live.list_audiences()]
    emails = [f"reader{i}@example.com" for i in range(5)]
    for email in emails:
        made = live.add_contact(audience["id"], email, data={"n": email[6]})
        assert made["id"].startswith("con_") and made["audience_id"] == audience["id"]
    with pytest.raises(ConflictError) as repeat:
        live.add_contact(audience["id"], "READER0@example.com")
    assert (repeat.value.status, repeat.value.code) == (409, "contact_exists")
    first = live.list_contacts(audience["id"], limit=2)
    assert len(first["data"]) == 2 and first["next_cursor"] is not None
    # The iterator follows next_cursor to the last page: every contact once.
    assert sorted(c["email"] for c in live.iter_contacts(audience["id"], page_size=2)) == emails
    assert live.get_audience(audience["id"])["contacts"] == 5
    live.delete_audience(audience["id"])
    with pytest.raises(NotFoundError) as gone:
        live.get_audience(audience["id"])
    assert gone.value.code == "not_found"


def test_a_contact_is_read_by_id_or_email_changed_and_removed(live: Gatepost) -> None:
    audience = live.create_audience("Customers")
    made = live.add_contact(audience["id"], "Dee@Example.com", name="Dee", data={"plan": "pro"})
    assert (made["email"], made["name"], made["unsubscribed"]) == ("dee@example.com", "Dee", False)
    assert live.get_contact(audience["id"], "dee@example.com")["id"] == made["id"]
    changed = live.update_contact(audience["id"], made["id"], {"name": None, "unsubscribed": True})
    assert (changed["name"], changed["unsubscribed"], changed["data"]) == (None, True, {"plan": "pro"})
    live.remove_contact(audience["id"], "dee@example.com")
    with pytest.raises(NotFoundError):
        live.get_contact(audience["id"], made["id"])


def test_a_csv_import_reports_added_updated_and_refused_rows(live: Gatepost, tmp_path: Path) -> None:
    audience = live.create_audience("Imported")
    live.add_contact(audience["id"], "ann@example.com", name="Ann")
    path = tmp_path / "contacts.csv"
    path.write_text(CSV)
    report = live.import_contacts(audience["id"], path)
    assert (report["added"], report["updated"], report["refused_count"]) == (2, 1, 1)
    assert [(r["row"], r["email"]) for r in report["refused"]] == [(4, "not-an-address")]
    ann = live.get_contact(audience["id"], "ann@example.com")
    assert (ann["name"], ann["data"]) == ("Ann Again", {"plan": "pro"})
    # The same rows again, as bytes and as a stream: every good row is a contact already.
    again = live.import_contacts(audience["id"], CSV.encode())
    assert (again["added"], again["updated"], again["refused_count"]) == (0, 3, 1)
    streamed = live.import_contacts(audience["id"], io.BytesIO(b"email\neve@example.com\n"))
    assert (streamed["added"], streamed["refused"]) == (1, [])
    assert live.get_audience(audience["id"])["contacts"] == 4


def test_a_file_that_cannot_be_read_is_refused_whole(live: Gatepost) -> None:
    audience = live.create_audience("Broken")
    with pytest.raises(UnprocessableError) as refused:
        live.import_contacts(audience["id"], b'email,name\nann@example.com,"never closed\n')
    assert refused.value.code == "csv_invalid" and refused.value.details
    assert live.list_contacts(audience["id"])["data"] == []
