"""Crash safety: `ledger process` killed with SIGKILL in the middle of a large input.

The log must hold every command whole or not at all, every outcome printed before the kill
must be in it, and running the same input again must finish the job, answering what was
already done as duplicates.
"""
from __future__ import annotations

import json
import signal
import subprocess
from collections import Counter, defaultdict

from tests.builders import UNKNOWN, customer, line, order, product
from tests.given import owner
from tests.process import LEDGER

commands_total = 10_000  # 20 of the CLI's 500-line batches; killed once 3 are printed
printed_before_kill = 1_500
stock_initial = 10**6
BUSINESSES = ("shop-1", "shop-2")


def _input() -> tuple[list[dict], dict[str, list[str]]]:
    """Mostly orders that go through; every 10th vague (one block), every 10th over credit (block + escalation)."""
    commands, expected = [], {}
    for i in range(commands_total):
        business, command_id = BUSINESSES[i % 2], f"crash-{i}"
        if i % 10 == 0:
            c, events = order("cust-1", UNKNOWN, business, command_id=command_id), ["CommandBlocked"]
        elif i % 10 == 5:
            c, events = (order("cust-broke", [line("rice", 1)], business, command_id=command_id),
                         ["CommandBlocked", "EscalationRaised"])
        else:
            c, events = order("cust-1", [line(("rice", "beans")[i % 3 % 2], i % 3 + 1)], business,
                              command_id=command_id), ["OrderPlaced"]
        commands.append(c)
        expected[command_id] = events
    return commands, expected


def _log(store) -> tuple[dict[str, list[str]], dict[tuple[str, str], int]]:
    """Event types per command id, in log order, and the quantity ordered per (business, sku)."""
    by_command, ordered = defaultdict(list), Counter()
    for _, e in store.notifications():
        if e.command_id and e.command_id.startswith("crash-"):
            by_command[e.command_id].append(e.type)
        if e.type == "OrderPlaced":
            for l in e.lines:
                ordered[(e.business_id, l["sku"])] += l["quantity"]
    return by_command, ordered


def _assert_consistent(store, expected: dict[str, list[str]]) -> dict[str, list[str]]:
    by_command, ordered = _log(store)
    half_done = {c: types for c, types in by_command.items() if types != expected[c]}
    assert half_done == {}
    claimed = {key for business in BUSINESSES for key in store.claims_for("command", business, expected)}
    assert claimed == set(by_command)  # a claim exactly when the command's events are there
    for business in BUSINESSES:
        state = store.load(business)
        for sku in ("rice", "beans"):
            assert state.products[sku].available == stock_initial - ordered[(business, sku)]
    return by_command


def test_a_killed_process_leaves_whole_commands_and_a_rerun_completes_them(ledger, store, db_url, tmp_path):
    for business in BUSINESSES:
        owner(ledger, product("rice", 450, stock_initial, business), product("beans", 300, stock_initial, business),
              customer("cust-1", 10**15, business), customer("cust-broke", 0, business))
    commands, expected = _input()
    path = tmp_path / "commands.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in commands))
    argv = [LEDGER, "process", str(path), "--db", db_url]

    with open(tmp_path / "stderr", "wb") as err:
        killed = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err)
        printed = [json.loads(killed.stdout.readline()) for _ in range(printed_before_kill)]
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        killed.stdout.close()

    assert killed.returncode == -signal.SIGKILL, (tmp_path / "stderr").read_text()
    done = _assert_consistent(store, expected)
    assert printed_before_kill <= len(done) < commands_total  # killed in the middle, after those printed
    assert {o["command_id"] for o in printed} <= set(done)

    rerun = subprocess.run(argv, capture_output=True, timeout=300)

    assert rerun.returncode == 0, rerun.stderr.decode()
    outcomes = [json.loads(l) for l in rerun.stdout.splitlines()]
    assert [o["command_id"] for o in outcomes] == [c["command_id"] for c in commands]
    assert [o["duplicate"] for o in outcomes] == [c["command_id"] in done for c in commands]
    for first, again in zip(printed, outcomes):
        assert again == {**first, "duplicate": True}
    assert _assert_consistent(store, expected) == expected
