"""Gatepost's Python SDK: the API client (``Gatepost``) and the offline helpers that check a
webhook delivery (``verify_webhook``) and a signed delivery receipt (``verify_receipt``)."""

from .client import FINAL_STATUSES, Gatepost
from .errors import (
    ApiConnectionError,
    ApiError,
    ApiTimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    GatepostError,
    MalformedResponseError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ServerError,
    UnprocessableError,
)
from .receipts import ReceiptVerificationError, receipt_hash, verify_receipt, verify_receipt_chain
from .transport import RetryPolicy
from .version import __version__
from .webhooks import WebhookVerificationError, compute_signature, verify_webhook

__all__ = [
    "ApiConnectionError",
    "ApiError",
    "ApiTimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "FINAL_STATUSES",
    "Gatepost",
    "GatepostError",
    "MalformedResponseError",
    "NotFoundError",
    "PermissionDeniedError",
    "RateLimitError",
    "ReceiptVerificationError",
    "RetryPolicy",
    "ServerError",
    "UnprocessableError",
    "WebhookVerificationError",
    "__version__",
    "compute_signature",
    "receipt_hash",
    "verify_receipt",
    "verify_receipt_chain",
    "verify_webhook",
]
