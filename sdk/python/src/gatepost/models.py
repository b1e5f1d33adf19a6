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
    purpose: Literal["dkim", "spf", "dmarc", "return_path", "inbound_mx"]
    type: Literal["TXT", "MX"]
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
