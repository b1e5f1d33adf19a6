"""The shapes the API takes and answers (the served /openapi.json has every field's rules)."""

from __future__ import annotations

from typing import Any, Dict, List, Literal, Optional, TypedDict

# "from" is a Python keyword: these are dicts, written as the JSON is.
SendRequest = TypedDict(
    "SendRequest",
    {
        "from": str,
        "to": str,
        "reply_to": str,
        "subject": str,
        "html": str,
        "text": str,
        "template": str,
        "data": Dict[str, Any],
        "send_at": str,
        "stream": Literal["transactional", "broadcast"],
        "headers": Dict[str, str],
        "tags": List[str],
        "idempotency_key": str,
    },
    total=False,
)


class SendResult(TypedDict):
    id: str
    status: Literal["queued", "scheduled"]
    to: str
    created_at: str
    send_at: Optional[str]
    sandbox: bool


class BatchResult(TypedDict):
    #: Each item: a SendResult with ``index`` and ``replayed``, or ``{"index", "error"}``.
    results: List[Dict[str, Any]]
    accepted: int
    refused: int


class Event(TypedDict):
    id: str
    type: str
    created_at: str
    data: Dict[str, Any]


Message = TypedDict(
    "Message",
    {
        "id": str,
        "status": Literal["held", "scheduled", "queued", "deferred", "sent", "bounced"],
        "from": str,
        "to": str,
        "subject": str,
        "stream": str,
        "sandbox": bool,
        "tags": List[str],
        "idempotency_key": Optional[str],
        "message_id_header": str,
        "created_at": str,
        "send_at": Optional[str],
        #: The timeline, oldest first.
        "events": List[Event],
    },
)


class ReceiptRef(TypedDict):
    id: str
    jws: str
    domain: Optional[str]


class Receipt(TypedDict):
    id: str
    jws: str
    receipts: List[ReceiptRef]


Template = TypedDict(
    "Template",
    {
        "id": str,
        "slug": str,
        "name": Optional[str],
        "subject": str,
        "html": str,
        "text": Optional[str],
        "from": Optional[str],
        "to": Optional[str],
        "reply_to": Optional[str],
        "created_at": str,
        "updated_at": str,
    },
)


class Suppression(TypedDict):
    address: str
    reason: Literal["hard_bounce", "complaint", "unsubscribe", "manual"]
    detail: Optional[str]
    created_at: str


class ValidationChecks(TypedDict):
    """Each finding; None where it was not made (after a syntax failure, or when DNS did not answer)."""

    syntax: bool
    domain: Optional[bool]
    mx: Optional[bool]
    null_mx: Optional[bool]
    disposable: Optional[bool]
    role: Optional[bool]
    free_provider: Optional[bool]
    suppressed: Optional[bool]


class Validation(TypedDict):
    """The verdict on one address (docs/validate.md)."""

    address: str
    result: Literal["deliverable", "undeliverable", "risky", "unknown"]
    reasons: List[str]
    checks: ValidationChecks
    suggestion: Optional[str]


class Page(TypedDict):
    data: List[Dict[str, Any]]
    next_cursor: Optional[str]


class Webhook(TypedDict, total=False):
    id: str
    url: str
    events: List[str]
    enabled: bool
    disabled_reason: Optional[str]
    disabled_at: Optional[str]
    previous_secret_expires_at: Optional[str]
    created_at: str
    updated_at: str
    #: Only in the answer to create (and rotate): shown once.
    secret: str


class DnsRecord(TypedDict, total=False):
    purpose: Literal["dkim", "spf", "dmarc", "return_path", "inbound_mx", "tracking"]
    type: Literal["TXT", "MX", "CNAME"]
    name: str
    value: str
    priority: int
    required: bool
    status: Literal["pending", "verified", "failed"]
    found: Optional[List[str]]
    error: Optional[str]


class Domain(TypedDict):
    id: str
    name: str
    status: Literal["pending", "verified"]
    #: What to publish in DNS, and what the last look-up found.
    records: List[DnsRecord]
    #: The host its tracked links use once its CNAME is verified; None: none.
    tracking_host: Optional[str]
    checked_at: Optional[str]
    verified_at: Optional[str]
    created_at: str
    updated_at: str


SandboxMessage = TypedDict(
    "SandboxMessage",
    {
        "message_id": str,
        "from": str,
        "to": str,
        "subject": str,
        "html": str,
        "text": str,
        "headers": Dict[str, str],
        "captured_at": str,
    },
)


class EventFeedPage(TypedDict):
    """A page of the tenant's event feed (``list_events``)."""

    #: Oldest first.
    data: List[Event]
    #: Give it as ``after`` for the events that follow.
    cursor: str


class Audience(TypedDict):
    """A list of contacts broadcasts go to (docs/broadcasts.md)."""

    #: ``aud_…``
    id: str
    name: str
    #: Its contacts, unsubscribed ones included.
    contacts: int
    created_at: str


class Contact(TypedDict):
    #: ``con_…``
    id: str
    audience_id: str
    #: Lower case.
    email: str
    name: Optional[str]
    #: Merge variables.
    data: Dict[str, Any]
    #: Set, broadcasts skip the contact.
    unsubscribed: bool
    created_at: str
    updated_at: str


class ContactUpdate(TypedDict, total=False):
    """The fields to change: ``name`` None clears it; ``data`` is replaced whole."""

    email: str
    name: Optional[str]
    data: Dict[str, Any]
    unsubscribed: bool


class ContactPage(TypedDict):
    data: List[Contact]
    #: Give it as ``cursor`` for the next page; None on the last.
    next_cursor: Optional[str]


class RefusedRow(TypedDict):
    #: The header is row 1.
    row: int
    email: str
    reason: str


class ImportReport(TypedDict):
    """What a CSV import did: rows added and updated (by email), and those refused."""

    added: int
    updated: int
    #: Every row refused; ``refused`` lists the first 100.
    refused_count: int
    refused: List[RefusedRow]


class InboundRoute(TypedDict):
    """Where mail to a match goes (docs/inbound.md)."""

    #: ``rte_…``
    id: str
    #: ``user@domain``, ``*@domain`` or a local part with ``*`` wildcards; lower case.
    match: str
    domain: str
    action: Literal["webhook", "store"]
    #: The one endpoint posted to; None: every endpoint subscribed to ``email.inbound``.
    endpoint_id: Optional[str]
    created_at: str
    updated_at: str


class InboundRouteFields(TypedDict, total=False):
    match: str
    action: Literal["webhook", "store"]
    endpoint_id: Optional[str]


class BreakerWindow(TypedDict):
    sample: int
    sent: int
    hard_bounces: int
    blocks: int
    complaints: int
    bounce_rate: float
    complaint_rate: float
    block_rate: float


class Breaker(TypedDict):
    status: Literal["closed", "warning", "open", "half_open"]
    since: str
    reason: Optional[str]
    window: BreakerWindow
    half_open_at: Optional[str]


class DomainBreaker(Breaker):
    domain: str


class Reputation(Breaker):
    """The tenant's reputation breaker, and each sending domain's (docs/reputation.md)."""

    domains: List[DomainBreaker]


class QueueEntry(TypedDict):
    """The tenant's mail waiting for one destination's delivery slots."""

    tenant_id: str
    destination: str
    waiting: int
    in_flight: int
    oldest_age_seconds: float


class InboundAttachment(TypedDict):
    """An attachment of a received message, downloaded."""

    #: As the message named it (characters outside printable ASCII replaced by ``_``), or None.
    filename: Optional[str]
    #: As Gatepost serves it: the part's own type.
    content_type: str
    content: bytes


# "from" is a Python keyword: written as the JSON is.
BroadcastFields = TypedDict(
    "BroadcastFields",
    {
        "name": str,
        "audience_id": str,
        "from": str,
        "subject": str,
        "html": str,
        "text": str,
        "template": str,
        "data": Dict[str, Any],
        "sandbox": bool,
    },
    total=False,
)

BroadcastStatus = Literal["draft", "scheduled", "sending", "paused", "sent", "cancelled"]


class BroadcastRefused(TypedDict):
    suppressed: int
    unsubscribed: int
    other: int


class BroadcastProgress(TypedDict):
    """The fan-out's own count: messages admitted, contacts refused."""

    admitted: int
    refused: BroadcastRefused
    started_at: Optional[str]
    finished_at: Optional[str]


class BroadcastResults(TypedDict):
    """The messages' lifecycle events, each message counted once per kind."""

    sent: int
    bounced: int
    opened: int
    clicked: int
    unsubscribed: int
    complained: int


class BroadcastPaused(TypedDict):
    reason: str
    until: str


Broadcast = TypedDict(
    "Broadcast",
    {
        "id": str,
        "name": str,
        "audience_id": str,
        "from": str,
        "subject": Optional[str],
        "html": Optional[str],
        "text": Optional[str],
        "template": Optional[str],
        "data": Dict[str, Any],
        "sandbox": bool,
        "status": BroadcastStatus,
        "send_at": Optional[str],
        "created_at": str,
        "updated_at": str,
        # Read one by one (get_broadcast, send_broadcast, cancel_broadcast); a listed one has none of these.
        "paused": Optional[BroadcastPaused],
        "progress": Optional[BroadcastProgress],
        "results": Optional[BroadcastResults],
    },
    total=False,
)


class BroadcastPage(TypedDict):
    #: Newest first.
    data: List[Broadcast]
    next_cursor: Optional[str]


class AutomationCreate(TypedDict, total=False):
    """An automation as written (docs/automations.md): ``trigger`` is ``{"type": "contact_added"}``,
    ``{"type": "email_event", "event": "email.opened"}`` or ``{"type": "custom_event", "name": …}``;
    each step a ``wait``, ``send`` or ``if`` dict."""

    name: str
    audience_id: str
    trigger: Dict[str, Any]
    steps: List[Dict[str, Any]]
    sandbox: bool


class Automation(TypedDict):
    #: ``aut_…``
    id: str
    name: str
    audience_id: str
    trigger: Dict[str, Any]
    #: As written, each wait with its ``seconds`` too.
    steps: List[Dict[str, Any]]
    sandbox: bool
    enabled: bool
    created_at: str
    updated_at: str


AutomationRunStatus = Literal["running", "waiting", "completed", "stopped", "failed"]


class AutomationRunEntry(TypedDict):
    at: str
    #: ``run.started``, ``step.waiting``, ``step.sent``, ``step.condition``, ``run.completed``, ``run.stopped``, ``run.failed``
    type: str
    step: Optional[str]
    data: Dict[str, Any]


class AutomationRun(TypedDict, total=False):
    #: ``run_…``
    id: str
    automation_id: str
    contact_id: str
    email: str
    status: AutomationRunStatus
    #: Why it stopped or failed.
    reason: Optional[str]
    started_at: str
    updated_at: str
    # Read one by one (get_automation_run); a listed run has none of these.
    trigger: Dict[str, Any]
    data: Dict[str, Any]
    timeline: List[AutomationRunEntry]


class AutomationRunPage(TypedDict):
    #: Newest first.
    data: List[AutomationRun]
    next_cursor: Optional[str]


class PostedEvent(TypedDict):
    #: ``evt_…``
    id: str
    #: The runs it started; empty for a repeat of its idempotency key.
    runs: List[str]
