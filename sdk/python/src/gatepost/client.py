"""The Gatepost API client: one method per entry of the operations table (table.py)."""

from __future__ import annotations

import os
import time
import urllib.parse
from datetime import datetime, timezone
from typing import IO, Any, Dict, Iterator, List, Optional, Union, cast

from .version import __version__
from .receipts import verify_receipt
from .table import OPERATIONS
from .transport import Download, RetryPolicy, Transport, Upload
from .models import (
    Audience,
    Automation,
    AutomationCreate,
    AutomationRun,
    AutomationRunPage,
    BatchResult,
    Broadcast,
    BroadcastFields,
    BroadcastPage,
    Contact,
    ContactPage,
    ContactUpdate,
    Domain,
    Event,
    EventFeedPage,
    ImportReport,
    InboundAttachment,
    InboundRoute,
    InboundRouteFields,
    Message,
    QueueEntry,
    Reputation,
    Page,
    PostedEvent,
    Receipt,
    SandboxMessage,
    SendRequest,
    SendResult,
    Suppression,
    Template,
    Validation,
    Webhook,
)


#: A message in one of these has had its last delivery outcome.
FINAL_STATUSES = frozenset({"sent", "bounced"})


class Gatepost:
    """A client for one API key.

    ``Gatepost(api_key, base_url=...)``; both default to ``GATEPOST_API_KEY`` and ``GATEPOST_URL``.
    ``timeout`` bounds each connection and each read, in seconds; ``max_attempts`` bounds the
    tries of one call (transport.py says which failures are retried).
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        *,
        base_url: Optional[str] = None,
        timeout: float = 30.0,
        max_attempts: int = 3,
        retry: Optional[RetryPolicy] = None,
    ) -> None:
        api_key = api_key if api_key is not None else os.environ.get("GATEPOST_API_KEY")
        base_url = base_url or os.environ.get("GATEPOST_URL") or "http://localhost:3000"
        policy = retry or RetryPolicy(max_attempts=max_attempts)
        self._transport = Transport(base_url, api_key, timeout, policy, f"gatepost-python/{__version__}")

    def _call(
        self,
        operation: str,
        path_params: Optional[Dict[str, str]] = None,
        *,
        body: Any = None,
        query: Optional[Dict[str, Any]] = None,
        headers: Optional[Dict[str, str]] = None,
        timeout: Optional[float] = None,
        download: bool = False,
    ) -> Any:
        method, template = OPERATIONS[operation]
        path = template.format(**{k: urllib.parse.quote(v, safe="") for k, v in (path_params or {}).items()})
        given = {k: v for k, v in (query or {}).items() if v is not None}
        if given:
            path += "?" + urllib.parse.urlencode(given)
        return self._transport.request(method, path, body, headers, timeout, download)

    @staticmethod
    def _key_header(idempotency_key: Optional[str]) -> Optional[Dict[str, str]]:
        return {"Idempotency-Key": idempotency_key} if idempotency_key is not None else None

    # Sending and reading messages

    def send(self, email: SendRequest, *, idempotency_key: Optional[str] = None) -> SendResult:
        """Sends one email (202). A repeat with the same ``idempotency_key`` answers the first send."""
        return cast(SendResult, self._call("send_email", body=email, headers=self._key_header(idempotency_key)))

    def send_batch(self, emails: List[SendRequest], *, idempotency_key: Optional[str] = None) -> BatchResult:
        """Sends up to 500 emails, each admitted or refused on its own; the key covers each item."""
        return cast(BatchResult, self._call("send_batch", body=emails, headers=self._key_header(idempotency_key)))

    def validate(self, address: str) -> Validation:
        """Checks an address before a send; an invalid address is a verdict, not an error."""
        return cast(Validation, self._call("validate", body={"address": address}))

    def validate_batch(self, addresses: List[str]) -> List[Validation]:
        """Checks up to 1,000 addresses: one verdict each, in order."""
        return cast(List[Validation], self._call("validate_batch", body={"addresses": addresses})["results"])

    def get_message(self, message_id: str) -> Message:
        """A message, with its timeline under ``events``."""
        return cast(Message, self._call("get_message", {"id": message_id}))

    def timeline(self, message_id: str) -> List[Event]:
        """The events of a message's timeline, oldest first."""
        return self.get_message(message_id)["events"]

    def follow(self, message_id: str, *, interval: float = 1.0) -> Iterator[Event]:
        """Each event of the message's timeline as it comes, the ones so far first, until the
        message is sent or bounced (``FINAL_STATUSES``); the timeline is read every ``interval`` s."""
        seen: set[str] = set()
        while True:
            message = self.get_message(message_id)
            for event in message["events"]:
                if event["id"] not in seen:
                    seen.add(event["id"])
                    yield event
            if message["status"] in FINAL_STATUSES:
                return
            time.sleep(interval)

    def list_events(self, *, after: Optional[str] = None, wait: Optional[int] = None, limit: Optional[int] = None) -> EventFeedPage:
        """The tenant's lifecycle events after ``after`` (an earlier page's ``cursor``; none: only
        what comes next). With ``wait`` (seconds, up to 25), Gatepost holds the request until an
        event comes or the wait ends."""
        query = {"after": after, "wait": wait, "limit": limit}
        # The wait is the server's: the read must outlast it.
        read_timeout = max(self._transport.timeout, (wait or 0) + 10)
        return cast(EventFeedPage, self._call("list_events", query=query, timeout=read_timeout))

    def get_receipt(self, message_id: str) -> Receipt:
        """The signed delivery receipt of a delivered message (verify it with verify_receipt)."""
        return cast(Receipt, self._call("get_receipt", {"id": message_id}))

    def get_jwks(self) -> Dict[str, Any]:
        """The operator's public keys (a JWK Set), which verify receipts."""
        return cast(Dict[str, Any], self._call("get_jwks"))

    def verify_message_receipt(self, message_id: str) -> Dict[str, Any]:
        """Fetches the message's latest receipt and the operator's public keys, and verifies it
        (verify_receipt): answers its claims."""
        return verify_receipt(self.get_receipt(message_id)["jws"], self.get_jwks())

    # Templates

    def create_template(self, template: Dict[str, Any]) -> Template:
        return cast(Template, self._call("create_template", body=template))

    def list_templates(self) -> List[Template]:
        return cast(List[Template], self._call("list_templates")["data"])

    def get_template(self, slug: str) -> Template:
        return cast(Template, self._call("get_template", {"slug": slug}))

    def update_template(self, slug: str, changes: Dict[str, Any]) -> Template:
        return cast(Template, self._call("update_template", {"slug": slug}, body=changes))

    def delete_template(self, slug: str) -> None:
        self._call("delete_template", {"slug": slug})

    # Suppressions

    def add_suppression(self, address: str, *, reason: str = "manual", detail: Optional[str] = None) -> Suppression:
        body = {"address": address, "reason": reason, "detail": detail}
        return cast(Suppression, self._call("add_suppression", body=body))

    def list_suppressions(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page:
        """One page; pass its ``next_cursor`` back for the next (None after the last)."""
        return cast(Page, self._call("list_suppressions", query={"limit": limit, "cursor": cursor}))

    def get_suppression(self, address: str) -> Suppression:
        """The entry of a suppressed address; NotFoundError when it is not suppressed."""
        return cast(Suppression, self._call("get_suppression", {"address": address}))

    def delete_suppression(self, address: str) -> None:
        self._call("delete_suppression", {"address": address})

    # Sending domains

    def create_domain(self, name: str, *, tracking_host: Optional[str] = None) -> Domain:
        """Adds a sending domain: its ``records`` are what to publish in DNS (with a tracking
        host's CNAME, when one is named)."""
        body = {"name": name, **({"tracking_host": tracking_host} if tracking_host else {})}
        return cast(Domain, self._call("create_domain", body=body))

    def set_tracking_host(self, domain_id: str, tracking_host: Optional[str]) -> Domain:
        """Names the host the domain's tracked links use, or none (None); its CNAME is pending
        until the next verification."""
        return cast(Domain, self._call("update_domain", {"id": domain_id}, body={"tracking_host": tracking_host}))

    def list_domains(self) -> List[Domain]:
        return cast(List[Domain], self._call("list_domains")["data"])

    def get_domain(self, domain_id: str) -> Domain:
        return cast(Domain, self._call("get_domain", {"id": domain_id}))

    def verify_domain(self, domain_id: str) -> Domain:
        """Looks every record up; the answer says what each showed."""
        return cast(Domain, self._call("verify_domain", {"id": domain_id}))

    def delete_domain(self, domain_id: str) -> None:
        self._call("delete_domain", {"id": domain_id})

    # Webhooks

    def create_webhook(self, url: str, events: List[str]) -> Webhook:
        """The answer's ``secret`` is shown this once: keep it to verify deliveries."""
        return cast(Webhook, self._call("create_webhook", body={"url": url, "events": events}))

    def list_webhooks(self) -> List[Webhook]:
        return cast(List[Webhook], self._call("list_webhooks")["data"])

    def get_webhook(self, webhook_id: str) -> Webhook:
        return cast(Webhook, self._call("get_webhook", {"id": webhook_id}))

    def update_webhook(
        self,
        webhook_id: str,
        *,
        url: Optional[str] = None,
        events: Optional[List[str]] = None,
        enabled: Optional[bool] = None,
    ) -> Webhook:
        changes = {k: v for k, v in {"url": url, "events": events, "enabled": enabled}.items() if v is not None}
        return cast(Webhook, self._call("update_webhook", {"id": webhook_id}, body=changes))

    def delete_webhook(self, webhook_id: str) -> None:
        self._call("delete_webhook", {"id": webhook_id})

    def rotate_webhook_secret(self, webhook_id: str) -> Dict[str, str]:
        """A new secret (shown once); for 24 hours deliveries are signed with both."""
        return cast(Dict[str, str], self._call("rotate_webhook_secret", {"id": webhook_id}))

    def test_webhook(self, webhook_id: str) -> Event:
        """Sends a ``webhook.test`` event through the normal delivery path; answers it."""
        return cast(Event, self._call("test_webhook", {"id": webhook_id})["event"])

    def list_webhook_deliveries(self, webhook_id: str, *, limit: Optional[int] = None) -> List[Dict[str, Any]]:
        """The latest delivery attempts, newest first."""
        answer = self._call("list_webhook_deliveries", {"id": webhook_id}, query={"limit": limit})
        return cast(List[Dict[str, Any]], answer["data"])

    def retry_webhook_delivery(self, webhook_id: str, event_id: str) -> Dict[str, str]:
        return cast(Dict[str, str], self._call("retry_webhook_delivery", {"id": webhook_id, "evt": event_id}))

    # The sandbox capture inbox

    def list_sandbox_messages(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page:
        return cast(Page, self._call("list_sandbox_messages", query={"limit": limit, "cursor": cursor}))

    def get_sandbox_message(self, message_id: str) -> SandboxMessage:
        return cast(SandboxMessage, self._call("get_sandbox_message", {"id": message_id}))

    # Deliverability: reports received, the reputation breakers, the queue

    def list_reports(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page:
        """Bounces and complaints received at the return-path domains, newest first: one page."""
        return cast(Page, self._call("list_reports", query={"limit": limit, "cursor": cursor}))

    def get_reputation(self) -> Reputation:
        """The tenant's reputation breaker and each sending domain's, with the rates of the window."""
        return cast(Reputation, self._call("get_reputation"))

    def get_queue(self) -> List[QueueEntry]:
        """The tenant's mail in the fair queue, per destination."""
        return cast(List[QueueEntry], self._call("get_queue")["data"])

    # Inbound mail (docs/inbound.md)

    def create_inbound_route(
        self, match: str, *, action: Optional[str] = None, endpoint_id: Optional[str] = None
    ) -> InboundRoute:
        """Routes mail to ``match`` on a verified domain of the tenant (UnprocessableError
        ``inbound_domain_not_verified`` otherwise): posted as ``email.inbound`` (action
        ``webhook``, the default) or only kept (``store``)."""
        fields = {"match": match, "action": action, "endpoint_id": endpoint_id}
        body = {k: v for k, v in fields.items() if v is not None}
        return cast(InboundRoute, self._call("create_inbound_route", body=body))

    def list_inbound_routes(self) -> List[InboundRoute]:
        return cast(List[InboundRoute], self._call("list_inbound_routes")["data"])

    def get_inbound_route(self, route_id: str) -> InboundRoute:
        return cast(InboundRoute, self._call("get_inbound_route", {"id": route_id}))

    def update_inbound_route(self, route_id: str, changes: InboundRouteFields) -> InboundRoute:
        return cast(InboundRoute, self._call("update_inbound_route", {"id": route_id}, body=changes))

    def delete_inbound_route(self, route_id: str) -> None:
        self._call("delete_inbound_route", {"id": route_id})

    def list_inbound_messages(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> Page:
        """Mail the inbound MX received for the tenant, newest first: one page."""
        return cast(Page, self._call("list_inbound_messages", query={"limit": limit, "cursor": cursor}))

    def get_inbound_message(self, message_id: str) -> Dict[str, Any]:
        """A received message: its envelope and every field of its ``email.inbound`` payload."""
        return cast(Dict[str, Any], self._call("get_inbound_message", {"id": message_id}))

    def get_inbound_raw(self, message_id: str) -> bytes:
        """The received message byte for byte as the inbound MX took it (``message/rfc822``)."""
        download: Download = self._call("get_inbound_raw", {"id": message_id}, download=True)
        return download.content

    def get_inbound_attachment(self, message_id: str, n: int) -> InboundAttachment:
        """Attachment ``n`` (from 0, in the order of the message's ``attachments``): its bytes,
        content type and filename. NotFoundError when the message has no such attachment."""
        download: Download = self._call("get_inbound_attachment", {"id": message_id, "n": str(n)}, download=True)
        filename = download.headers.get_param("filename", header="content-disposition")
        return {
            "filename": filename if isinstance(filename, str) else None,
            "content_type": download.headers.get("Content-Type", "application/octet-stream"),
            "content": download.content,
        }

    # Audiences and their contacts (docs/broadcasts.md)

    def create_audience(self, name: str) -> Audience:
        return cast(Audience, self._call("create_audience", body={"name": name}))

    def list_audiences(self) -> List[Audience]:
        return cast(List[Audience], self._call("list_audiences")["data"])

    def get_audience(self, audience_id: str) -> Audience:
        return cast(Audience, self._call("get_audience", {"id": audience_id}))

    def delete_audience(self, audience_id: str) -> None:
        """Deletes the audience and its contacts."""
        self._call("delete_audience", {"id": audience_id})

    def add_contact(
        self,
        audience_id: str,
        email: str,
        *,
        name: Optional[str] = None,
        data: Optional[Dict[str, Any]] = None,
        unsubscribed: Optional[bool] = None,
    ) -> Contact:
        """Adds a contact; ConflictError ``contact_exists`` when the audience has the email already."""
        fields = {"email": email, "name": name, "data": data, "unsubscribed": unsubscribed}
        body = {k: v for k, v in fields.items() if v is not None}
        return cast(Contact, self._call("add_contact", {"id": audience_id}, body=body))

    def list_contacts(self, audience_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> ContactPage:
        """One page (up to 1,000), by id; pass its ``next_cursor`` back for the next (None after the last)."""
        query = {"limit": limit, "cursor": cursor}
        return cast(ContactPage, self._call("list_contacts", {"id": audience_id}, query=query))

    def iter_contacts(self, audience_id: str, *, page_size: Optional[int] = None) -> Iterator[Contact]:
        """Every contact of the audience, by id, a page of ``page_size`` read at a time."""
        cursor: Optional[str] = None
        while True:
            page = self.list_contacts(audience_id, limit=page_size, cursor=cursor)
            yield from page["data"]
            cursor = page["next_cursor"]
            if cursor is None:
                return

    def get_contact(self, audience_id: str, contact: str) -> Contact:
        """By the contact's id (``con_…``) or its email."""
        return cast(Contact, self._call("get_contact", {"id": audience_id, "contact": contact}))

    def update_contact(self, audience_id: str, contact: str, changes: ContactUpdate) -> Contact:
        """Changes the fields given: ``name`` None clears it, ``data`` is replaced whole."""
        return cast(Contact, self._call("update_contact", {"id": audience_id, "contact": contact}, body=changes))

    def remove_contact(self, audience_id: str, contact: str) -> None:
        self._call("remove_contact", {"id": audience_id, "contact": contact})

    def import_contacts(self, audience_id: str, csv: Union[str, "os.PathLike[str]", bytes, IO[bytes]]) -> ImportReport:
        """Imports a CSV file: a header row naming ``email``, then ``name``, ``unsubscribed`` and
        any data columns. ``csv`` is a path (str or Path, streamed from disk), the file's bytes,
        or a binary file object. Bad rows are refused one by one in the report; a file that cannot
        be read is UnprocessableError ``csv_invalid``, and nothing is imported."""
        if isinstance(csv, (str, os.PathLike)):
            with open(csv, "rb") as file:
                return self.import_contacts(audience_id, file)
        if not isinstance(csv, bytes) and not callable(getattr(csv, "read", None)):
            raise TypeError(f"csv is a path, bytes or a binary file, not {type(csv).__name__}")
        return cast(ImportReport, self._call("import_contacts", {"id": audience_id}, body=Upload("text/csv", csv)))

    # Broadcasts (docs/broadcasts.md)

    def create_broadcast(self, broadcast: BroadcastFields) -> Broadcast:
        """A draft to an audience: ``html`` or a ``template``; ``subject`` unless the template has
        one. NotFoundError for an audience that is not the tenant's, UnprocessableError
        ``template_not_found`` for an unknown template."""
        return cast(Broadcast, self._call("create_broadcast", body=broadcast))

    def list_broadcasts(self, *, limit: Optional[int] = None, cursor: Optional[str] = None) -> BroadcastPage:
        """One page, newest first; pass its ``next_cursor`` back for the next (None after the last)."""
        return cast(BroadcastPage, self._call("list_broadcasts", query={"limit": limit, "cursor": cursor}))

    def get_broadcast(self, broadcast_id: str) -> Broadcast:
        """The broadcast with its ``progress`` (the fan-out's count) and ``results`` (its messages' events)."""
        return cast(Broadcast, self._call("get_broadcast", {"id": broadcast_id}))

    def delete_broadcast(self, broadcast_id: str) -> None:
        """Deletes a draft; ConflictError ``broadcast_not_draft`` once it has been sent (cancel it instead)."""
        self._call("delete_broadcast", {"id": broadcast_id})

    def send_broadcast(self, broadcast_id: str, *, send_at: Union[None, str, datetime] = None) -> Broadcast:
        """Sends a draft now, or schedules it at ``send_at`` (at most 30 days ahead; a datetime
        without a time zone is taken as UTC). Not retried after a failure: a send that went through
        answers a second one ConflictError ``broadcast_already_sent``."""
        if isinstance(send_at, datetime):
            send_at = (send_at if send_at.tzinfo else send_at.replace(tzinfo=timezone.utc)).isoformat()
        body = {} if send_at is None else {"send_at": send_at}
        return cast(Broadcast, self._call("send_broadcast", {"id": broadcast_id}, body=body))

    def cancel_broadcast(self, broadcast_id: str) -> Broadcast:
        """Stops a scheduled, sending or paused broadcast: nobody not yet admitted is sent to."""
        return cast(Broadcast, self._call("cancel_broadcast", {"id": broadcast_id}))

    # Automations and custom events (docs/automations.md)

    def create_automation(self, automation: AutomationCreate) -> Automation:
        """Creates it, enabled; checked whole first (UnprocessableError ``automation_cycle``,
        ``automation_step_unknown``, …): a refusal creates nothing."""
        return cast(Automation, self._call("create_automation", body=automation))

    def list_automations(self) -> List[Automation]:
        """Every automation of the tenant, oldest first."""
        return cast(List[Automation], self._call("list_automations")["data"])

    def get_automation(self, automation_id: str) -> Automation:
        return cast(Automation, self._call("get_automation", {"id": automation_id}))

    def update_automation(self, automation_id: str, *, name: Optional[str] = None, enabled: Optional[bool] = None) -> Automation:
        """Renames it, or disables it (``enabled=False``: its runs stop at their next step) or enables it again."""
        changes = {k: v for k, v in {"name": name, "enabled": enabled}.items() if v is not None}
        return cast(Automation, self._call("update_automation", {"id": automation_id}, body=changes))

    def delete_automation(self, automation_id: str) -> None:
        """Deletes it and its list of runs; its runs stop at their next step."""
        self._call("delete_automation", {"id": automation_id})

    def list_automation_runs(
        self, automation_id: str, *, limit: Optional[int] = None, cursor: Optional[str] = None
    ) -> AutomationRunPage:
        """One page of its runs, newest first; pass its ``next_cursor`` back for the next."""
        query = {"limit": limit, "cursor": cursor}
        return cast(AutomationRunPage, self._call("list_automation_runs", {"id": automation_id}, query=query))

    def get_automation_run(self, automation_id: str, run_id: str) -> AutomationRun:
        """One run with its ``timeline``."""
        return cast(AutomationRun, self._call("get_automation_run", {"id": automation_id, "run": run_id}))

    def send_event(
        self,
        name: str,
        email: str,
        *,
        data: Optional[Dict[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> PostedEvent:
        """A custom event about the contact ``email``: starts a run of each enabled automation
        triggered by ``name`` whose audience has the contact (NotFoundError ``contact_not_found``
        when none has). The same ``idempotency_key`` again starts nothing (``runs`` is empty)."""
        fields = {"name": name, "email": email, "data": data, "idempotency_key": idempotency_key}
        body = {k: v for k, v in fields.items() if v is not None}
        return cast(PostedEvent, self._call("send_event", body=body))
