"""One HTTP request to Gatepost, with bounded retries: urllib from the standard library.

Retried, with exponential backoff and full jitter: a 429 (after its ``Retry-After``, when that
is not longer than ``max_retry_wait``: a daily quota's wait until midnight is raised at once), a
connection that could not be made (nothing reached the server), and, when repeating the request
cannot do anything twice (GET, PATCH, DELETE, or a request with an idempotency key), a 5xx and
a connection lost or timed out after the request went out.
"""

from __future__ import annotations

import email.utils
import http.client
import io
import json
import random
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message
from datetime import datetime, timezone
from typing import IO, Any, Callable, Optional, Tuple, Union

from .errors import ApiConnectionError, ApiError, ApiTimeoutError, MalformedResponseError, api_error

_REPEATABLE = {"GET", "HEAD", "PATCH", "PUT", "DELETE"}


@dataclass
class RetryPolicy:
    #: Attempts in all, the first included.
    max_attempts: int = 3
    #: The first backoff, doubled each retry (before jitter), in seconds.
    backoff: float = 0.5
    max_backoff: float = 8.0
    #: The longest ``Retry-After`` honoured; a longer one is raised as it is.
    max_retry_wait: float = 60.0


@dataclass
class Upload:
    """A body sent as it is, not as JSON (a CSV file): bytes, or a binary file read from where it
    stands. A file that can seek is rewound for a retry; one that cannot (a pipe) is tried once."""

    content_type: str
    data: Union[bytes, IO[bytes]]

    def span(self) -> Optional[Tuple[int, int]]:
        """Where a file starts (to rewind it to) and how many bytes are left in it; None for
        bytes, or a file that cannot seek."""
        if isinstance(self.data, bytes) or not self.data.seekable():
            return None
        start = self.data.tell()
        end = self.data.seek(0, io.SEEK_END)
        self.data.seek(start)
        return start, end - start


@dataclass
class Download:
    """An answer that is a file, not JSON."""

    content: bytes
    headers: Message


def _payload(body: Any, headers: dict[str, str]) -> Tuple[Union[None, bytes, IO[bytes]], Optional[Callable[[], Any]]]:
    """The request's body, its Content-Type (and Content-Length, when known) set in ``headers``,
    and how to rewind it before each attempt when it is a file that can seek."""
    if isinstance(body, Upload):
        headers["Content-Type"] = body.content_type
        span = body.span()
        if span is None:
            return body.data, None
        # Known, so the file goes with a Content-Length rather than chunked.
        start, headers["Content-Length"] = span[0], str(span[1])
        return body.data, lambda: body.data.seek(start)  # type: ignore[union-attr]
    if body is None:
        return None, None
    headers["Content-Type"] = "application/json"
    return json.dumps(body).encode("utf-8"), None


def _retry_after(value: Optional[str]) -> Optional[float]:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - datetime.now(timezone.utc)).total_seconds())


def _decode_error(status: int, raw: bytes, retry_after: Optional[float]) -> ApiError | MalformedResponseError:
    try:
        error = json.loads(raw)["error"]
        return api_error(status, str(error["code"]), str(error["message"]), error.get("details"), retry_after)
    except (ValueError, KeyError, TypeError):
        excerpt = raw[:200].decode("utf-8", "replace")
        return MalformedResponseError(status, f"not the API's error shape: {excerpt!r}")


class Transport:
    def __init__(
        self,
        base_url: str,
        api_key: Optional[str],
        timeout: float,
        retry: RetryPolicy,
        user_agent: str,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.retry = retry
        self.user_agent = user_agent
        self._sleep = sleep
        if retry.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")

    def _backoff(self, attempt: int) -> float:
        return random.uniform(0, min(self.retry.max_backoff, self.retry.backoff * 2**attempt))

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: Optional[dict[str, str]] = None,
        timeout: Optional[float] = None,
        download: bool = False,
    ) -> Any:
        """Answers the decoded JSON body (None for 204), or raises a GatepostError. ``timeout``
        replaces the transport's for this request. A ``download`` answers a Download instead:
        the body's bytes as they are, with the answer's headers."""
        accept = "*/*" if download else "application/json"
        all_headers = {"Accept": accept, "User-Agent": self.user_agent, **(headers or {})}
        if self.api_key:
            all_headers["Authorization"] = f"Bearer {self.api_key}"
        data, rewind = _payload(body, all_headers)
        repeatable = method in _REPEATABLE or "Idempotency-Key" in all_headers
        # A stream read once (a pipe) cannot be sent again.
        once = isinstance(body, Upload) and not isinstance(data, bytes) and rewind is None
        attempts = 1 if once else self.retry.max_attempts
        for attempt in range(attempts):
            last = attempt == attempts - 1
            if rewind:
                rewind()
            req = urllib.request.Request(self.base_url + path, data=data, method=method, headers=all_headers)
            try:
                with urllib.request.urlopen(req, timeout=timeout or self.timeout) as res:
                    if download:
                        return Download(res.read(), res.headers)
                    return self._decode(res.status, res.read())
            except urllib.error.HTTPError as res:
                raw = res.read()
                wait = _retry_after(res.headers.get("Retry-After"))
                error = _decode_error(res.code, raw, wait)
                if last:
                    raise error from None
                if res.code == 429 and (wait is None or wait <= self.retry.max_retry_wait):
                    self._sleep(wait if wait is not None else self._backoff(attempt))
                elif res.code >= 500 and repeatable:
                    self._sleep(wait if wait is not None and wait <= self.retry.max_retry_wait else self._backoff(attempt))
                else:
                    raise error from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as failure:
                reason = failure.reason if isinstance(failure, urllib.error.URLError) else failure
                timed_out = isinstance(reason, (socket.timeout, TimeoutError))
                not_sent = isinstance(reason, ConnectionRefusedError)
                if last or not (not_sent or repeatable):
                    cls = ApiTimeoutError if timed_out else ApiConnectionError
                    raise cls(f"{method} {path}: {reason}") from failure
                self._sleep(self._backoff(attempt))
        raise AssertionError("unreachable")  # the loop returns or raises on its last attempt

    @staticmethod
    def _decode(status: int, raw: bytes) -> Any:
        if status == 204 or not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            excerpt = raw[:200].decode("utf-8", "replace")
            raise MalformedResponseError(status, f"the answer is not JSON: {excerpt!r}") from None
