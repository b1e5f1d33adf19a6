"""What the client raises. Every refusal of the API is an :class:`ApiError` (or one of its
subclasses, by HTTP status) carrying the coded ``error.code`` of docs/errors.md."""

from __future__ import annotations

from typing import Any, Optional


class GatepostError(Exception):
    """Base of every error the SDK raises."""


class ApiError(GatepostError):
    """The API answered with its error shape: ``{"error": {"code", "message", "details"}}``."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Optional[list[dict[str, Any]]] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        #: One entry per field at fault, ``{"field", "message"}``.
        self.details: list[dict[str, Any]] = details or []
        #: Seconds, from the ``Retry-After`` header, when the answer had one.
        self.retry_after = retry_after


class BadRequestError(ApiError):
    """400: ``invalid_request``."""


class AuthenticationError(ApiError):
    """401: a missing, unknown or revoked key."""


class PermissionDeniedError(ApiError):
    """403: the key may not do this."""


class NotFoundError(ApiError):
    """404."""


class ConflictError(ApiError):
    """409."""


class UnprocessableError(ApiError):
    """422: refused by policy (suppressed recipient, unverified sender, …)."""


class RateLimitError(ApiError):
    """429: over a rate or the daily quota; ``retry_after`` says when to try again."""


class ServerError(ApiError):
    """5xx."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: UnprocessableError,
    429: RateLimitError,
}


def api_error(
    status: int, code: str, message: str, details: Optional[list[dict[str, Any]]], retry_after: Optional[float]
) -> ApiError:
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return cls(status, code, message, details, retry_after)


class MalformedResponseError(GatepostError):
    """The server answered something that is not the API's JSON (a proxy's page, a cut body)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status


class ApiConnectionError(GatepostError):
    """No answer: the connection failed or timed out (after the retries)."""


class ApiTimeoutError(ApiConnectionError):
    """No answer within the timeout."""
