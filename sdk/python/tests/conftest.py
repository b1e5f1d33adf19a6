# The tests talk to a real Gatepost, started by sdk/python/python.sdk.test.ts, which passes its
# URL and a fresh tenant's keys in the environment.
import os
import time
from typing import Callable, Optional, TypeVar

import pytest

from gatepost import Gatepost
from gatepost.models import Event

T = TypeVar("T")


def env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through sdk/python/python.sdk.test.ts")
    return value


@pytest.fixture(scope="session")
def url() -> str:
    return env("GATEPOST_URL")


@pytest.fixture(scope="session")
def live(url: str) -> Gatepost:
    return Gatepost(env("GATEPOST_LIVE_KEY"), base_url=url, timeout=10)


@pytest.fixture(scope="session")
def sandbox(url: str) -> Gatepost:
    return Gatepost(env("GATEPOST_SANDBOX_KEY"), base_url=url, timeout=10)


@pytest.fixture(scope="session")
def receiver(url: str) -> Gatepost:
    """Another tenant's live key: its inbound MX received GATEPOST_INBOUND_ID (GATEPOST_INBOUND_EML)."""
    return Gatepost(env("GATEPOST_INBOUND_KEY"), base_url=url, timeout=10)


def eventually(check: Callable[[], Optional[T]], seconds: float = 20.0) -> T:
    """Polls ``check`` until it answers something other than None or False; fails after ``seconds``."""
    until = time.monotonic() + seconds
    while True:
        value = check()
        if value is not None and value is not False:
            return value
        if time.monotonic() > until:
            pytest.fail(f"not reached within {seconds} s")
        time.sleep(0.1)


def event_of(client: Gatepost, message_id: str, kind: str) -> Optional[Event]:
    return next((e for e in client.timeline(message_id) if e["type"] == kind), None)
