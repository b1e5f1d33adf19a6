# Retries, timeouts and bad answers, against tiny servers of the test's own.
import io
import json
import socket

import pytest

from gatepost import (
    ApiConnectionError,
    ApiTimeoutError,
    Gatepost,
    MalformedResponseError,
    RateLimitError,
    ServerError,
)
from local_server import Answer, local_server

SENT = {"id": "msg_1", "status": "queued", "to": "a@example.com", "created_at": "x", "send_at": None, "sandbox": True}
LIMITED = json.dumps({"error": {"code": "rate_limited", "message": "Slow down."}}).encode()


def test_a_429_is_retried_after_its_retry_after_with_the_same_idempotency_key() -> None:
    def respond(request: object, n: int) -> Answer:
        if n == 0:
            return Answer(429, LIMITED, {"Retry-After": "1", "Content-Type": "application/json"})
        return Answer(202, json.dumps(SENT).encode(), {"Content-Type": "application/json"})

    with local_server(respond) as (url, received):
        client = Gatepost("gp_sandbox_x", base_url=url)
        assert client.send({"to": "a@example.com", "subject": "s", "html": "h"}, idempotency_key="k-1") == SENT
    assert len(received) == 2
    assert [r.headers["idempotency-key"] for r in received] == ["k-1", "k-1"]
    assert received[1].headers["authorization"] == "Bearer gp_sandbox_x"


def test_retries_are_bounded_and_a_long_retry_after_is_raised_at_once() -> None:
    with local_server(lambda r, n: Answer(429, LIMITED, {"Retry-After": "0"})) as (url, received):
        with pytest.raises(RateLimitError) as limited:
            Gatepost("k", base_url=url, max_attempts=3).get_message("msg_1")
    assert (limited.value.code, limited.value.retry_after, len(received)) == ("rate_limited", 0, 3)
    # A daily quota's Retry-After counts the hours to midnight: no waiting that long.
    quota = json.dumps({"error": {"code": "quota_exceeded", "message": "Used up."}}).encode()
    with local_server(lambda r, n: Answer(429, quota, {"Retry-After": "3600"})) as (url, received):
        with pytest.raises(RateLimitError) as over:
            Gatepost("k", base_url=url).get_message("msg_1")
    assert (over.value.code, over.value.retry_after, len(received)) == ("quota_exceeded", 3600, 1)


def test_a_5xx_is_retried_when_repeating_is_safe_only() -> None:
    failing = json.dumps({"error": {"code": "storage_unavailable", "message": "Retry."}}).encode()

    def respond(request: object, n: int) -> Answer:
        return Answer(503, failing) if n == 0 else Answer(200, json.dumps({"data": []}).encode())

    with local_server(respond) as (url, received):
        assert Gatepost("k", base_url=url).list_templates() == []
    assert len(received) == 2
    # A POST without an idempotency key could act twice: its 5xx is raised.
    with local_server(respond) as (url, received):
        with pytest.raises(ServerError) as raised:
            Gatepost("k", base_url=url).create_domain("a.example")
    assert (raised.value.status, raised.value.code, len(received)) == (503, "storage_unavailable", 1)


def test_a_malformed_answer_is_a_typed_error() -> None:
    with local_server(lambda r, n: Answer(200, b"<html>proxy</html>")) as (url, _):
        with pytest.raises(MalformedResponseError):
            Gatepost("k", base_url=url).get_message("msg_1")
    with local_server(lambda r, n: Answer(502, b"<html>bad gateway</html>")) as (url, received):
        with pytest.raises(MalformedResponseError) as bad:
            Gatepost("k", base_url=url, max_attempts=2).get_message("msg_1")
    assert bad.value.status == 502 and len(received) == 2


def test_a_server_that_is_down_or_silent_is_an_error_not_a_hang() -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    with pytest.raises(ApiConnectionError):
        Gatepost("k", base_url=f"http://127.0.0.1:{port}", max_attempts=2).get_message("msg_1")
    # Accepts connections, never answers.
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        with pytest.raises(ApiTimeoutError):
            Gatepost("k", base_url=f"http://127.0.0.1:{silent.getsockname()[1]}", timeout=0.3, max_attempts=2).get_message("m")
    finally:
        silent.close()


def test_a_csv_file_is_sent_again_whole_after_a_429() -> None:
    report = {"added": 1, "updated": 0, "refused_count": 0, "refused": []}

    def respond(request: object, n: int) -> Answer:
        if n == 0:
            return Answer(429, LIMITED, {"Retry-After": "0"})
        return Answer(200, json.dumps(report).encode())

    csv = io.BytesIO(b"email\nann@example.com\n")
    with local_server(respond) as (url, received):
        assert Gatepost("k", base_url=url).import_contacts("aud_1", csv) == report
    assert [r.body for r in received] == [b"email\nann@example.com\n"] * 2
    assert {r.headers["content-type"] for r in received} == {"text/csv"}


def test_a_csv_that_is_no_file_is_refused_before_any_request() -> None:
    with local_server(lambda r, n: Answer(500)) as (url, received):
        with pytest.raises(TypeError, match="csv is a path, bytes or a binary file"):
            Gatepost("k", base_url=url).import_contacts("aud_1", 42)  # type: ignore[arg-type]
    assert received == []
