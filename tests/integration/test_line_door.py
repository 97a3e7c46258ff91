"""docs/architecture.md's new door, run as the page prints it: under 60 lines against the
runtime, a whole door (tokens, batches, outcomes, projections) on SQLite and PostgreSQL."""
from __future__ import annotations

import contextlib
import importlib.util
import json
import socket
import threading
from pathlib import Path
from types import ModuleType

import pytest

from ledger.store import agents
from projections.projector import Projector
from tests.builders import line, order, raw
from tests.given import a_shop, appended, types

ROOT = Path(__file__).resolve().parents[2]
door_lines_max = 59  # "under 60 lines"
reply_wait_s = 60.0  # a loaded machine's slowest answer, and then some


def door_text() -> str:
    doc = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    block = doc.split("<!-- begin: the line door -->\n", 1)[1].split("<!-- end: the line door -->", 1)[0]
    return block.strip().removeprefix("```python\n").removesuffix("```")


def load_door(tmp_path: Path) -> ModuleType:
    path = tmp_path / "line_door.py"
    path.write_text(door_text(), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("line_door", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def talk(door: ModuleType, runtime, token: bytes, lines: list[bytes]) -> list[dict]:
    """One connection: the token and the lines sent, then the end of sending; every line the
    door answers until it is done with the connection (and closes it)."""
    ours, theirs = socket.socketpair()
    ours.settimeout(reply_wait_s)

    def door_side() -> None:
        with theirs:
            door.serve(runtime, theirs)

    def send() -> None:
        with contextlib.suppress(OSError):  # the door may close before reading it all
            ours.sendall(b"\n".join([token, *lines]) + b"\n")
            ours.shutdown(socket.SHUT_WR)

    threads = [threading.Thread(target=door_side), threading.Thread(target=send)]
    for t in threads:
        t.start()
    answer = b""
    # A door that closes with input unread resets the connection: the end of its answer too.
    with ours, contextlib.suppress(ConnectionResetError):
        while chunk := ours.recv(1 << 16):
            answer += chunk
    for t in threads:
        t.join(reply_wait_s)
        assert not t.is_alive()
    return [json.loads(text) for text in answer.splitlines()]


def test_the_example_door_is_under_60_lines():
    assert len(door_text().splitlines()) <= door_lines_max


def test_the_example_door_answers_each_line_in_order_checked_against_the_token(ledger, store, db_url, tmp_path):
    # given: a shop, its agent's token, and the door as the page prints it
    a_shop(ledger)
    token = agents.register(ledger, "shop-1", "bot").encode()
    door = load_door(tmp_path)
    runtime = door.open_runtime(db_url)
    since = store.max_position()
    placed = order("cust-1", [line("rice", 2)], command_id="door-1")
    hostile = [b"{not json", b"\x00" * 10, "\ud800".encode("utf-8", "surrogatepass"), b"9" * 10_000]
    try:
        # when: an order, hostile lines, then the same order again; and one with another token
        answers = talk(door, runtime, token, [raw(placed), *hostile, raw(placed)])
        stranger = talk(door, runtime, b"lat_not-a-token", [raw(order("cust-1", [line("rice", 1)]))])
    finally:
        runtime.close()
    # then: one outcome a line, in order; the order placed once, the rest rejected, the stranger unauthenticated
    assert [(a["status"], a["duplicate"]) for a in answers] == [
        ("accepted", False), *[("rejected", False)] * len(hostile), ("accepted", True)]
    assert answers[0]["command_id"] == answers[-1]["command_id"] == "door-1"
    assert [(a["status"], a["reason"]) for a in stranger] == [("rejected", "unauthenticated")]
    assert types(appended(store, since)).count("OrderPlaced") == 1
    assert Projector(store).tracked()[0] == store.max_position()  # followed after each batch


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_the_example_door_closes_a_connection_whose_line_passes_the_limit(ledger, db_url, tmp_path):
    # given
    a_shop(ledger)
    token = agents.register(ledger, "shop-1", "bot").encode()
    door = load_door(tmp_path)
    runtime = door.open_runtime(db_url)
    try:
        # when: a line of 2 MiB with no newline yet, then a command after it
        answers = talk(door, runtime, token, [b"x" * (2 << 20) + raw(order("cust-1", [line("rice", 1)]))])
    finally:
        runtime.close()
    # then: nothing is answered and nothing decided
    assert answers == []
