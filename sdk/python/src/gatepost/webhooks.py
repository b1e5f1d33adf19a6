"""Verifying a Gatepost webhook delivery on the receiving side, with no call to Gatepost
(docs/webhooks.md, "The signature, byte for byte"):

    x-service-signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]
    v1 = hex(HMAC-SHA256(key = the secret as given, "whsec_…", UTF-8; message = "<t>.<raw body>"))

Several v1 values appear while a secret rotates: any one matching any of your secrets is
enough. A timestamp more than ``tolerance`` seconds (default 300) from now is refused, so a
captured delivery cannot be replayed later.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from typing import Any, Iterable, Literal, Mapping, Optional, Union

from .errors import GatepostError

SIGNATURE_HEADER = "x-service-signature"
DEFAULT_TOLERANCE_SECONDS = 5 * 60

VerificationFailure = Literal[
    "missing_signature", "malformed_signature", "timestamp_out_of_tolerance", "no_matching_signature", "invalid_payload"
]

_HEX64 = re.compile(r"^[0-9a-f]{64}$")


class WebhookVerificationError(GatepostError):
    def __init__(self, reason: VerificationFailure, message: str) -> None:
        super().__init__(message)
        self.reason = reason


def compute_signature(secret: str, timestamp: Union[int, str], payload: Union[str, bytes]) -> str:
    """Hex HMAC-SHA256 of ``<t>.<payload>`` under ``secret``: what ``v1`` holds."""
    body = payload.encode("utf-8") if isinstance(payload, str) else payload
    return hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode("ascii") + body, hashlib.sha256).hexdigest()


def _header(headers: Union[Mapping[str, Any], Any], name: str) -> Optional[str]:
    """A header from a dict (any case), http.server's or email's message, or a WSGI environ."""
    values: list[str] = []
    for key, value in headers.items():
        key = key.lower()
        if key.startswith("http_"):  # a WSGI environ: HTTP_X_SERVICE_SIGNATURE
            key = key[5:].replace("_", "-")
        if key == name:
            values.extend(value if isinstance(value, (list, tuple)) else [value])
    return ",".join(values) if values else None


def verify_webhook(
    payload: Union[str, bytes],
    headers: Union[Mapping[str, Any], Any],
    secret: Union[str, Iterable[str]],
    *,
    tolerance: float = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> dict[str, Any]:
    """Checks a delivery's ``x-service-signature`` and answers the event it carries.

    ``payload`` is the raw request body, byte for byte as received. ``secret`` is the endpoint's
    ``whsec_…`` secret, or several (the old and the new one during a rotation). Raises
    WebhookVerificationError, with a ``reason``, when the signature is missing, malformed, too
    old or too new, or matches none of the secrets.
    """
    value = _header(headers, SIGNATURE_HEADER)
    if not value:
        raise WebhookVerificationError("missing_signature", f"No {SIGNATURE_HEADER} header.")
    t: Optional[int] = None
    given: list[str] = []
    for part in value.split(","):
        key, _, v = part.partition("=")
        key, v = key.strip(), v.strip()
        if key == "t" and v.isdigit():
            t = int(v)
        elif key == "v1" and _HEX64.match(v):
            given.append(v)
    if t is None or not given:
        raise WebhookVerificationError(
            "malformed_signature", f'{SIGNATURE_HEADER} must be "t=<unix>,v1=<hex>[,v1=<hex>]".'
        )
    current = int(time.time() if now is None else now)
    if abs(current - t) > tolerance:
        raise WebhookVerificationError(
            "timestamp_out_of_tolerance", f"The timestamp {t} is more than {tolerance} s from now."
        )
    secrets = [secret] if isinstance(secret, str) else list(secret)
    # Every pair is compared (no early exit), each in constant time.
    match = False
    for s in secrets:
        expected = compute_signature(s, t, payload)
        for v1 in given:
            match = hmac.compare_digest(expected, v1) or match
    if not match:
        raise WebhookVerificationError("no_matching_signature", "No v1 signature matches the secret.")
    try:
        event = json.loads(payload)
    except ValueError:
        raise WebhookVerificationError("invalid_payload", "The signed payload is not JSON.") from None
    if not isinstance(event, dict):
        raise WebhookVerificationError("invalid_payload", "The signed payload is not an event.")
    return event
