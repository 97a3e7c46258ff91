"""The storage fuzzer (CONTRACT 11): hostile text in every text field of every command type,
on SQLite and PostgreSQL, through `ledger process` / `ledger admin apply` and through
Ledger.handle. Each input gets exactly one outcome (the one section 11 says, where it says
one), the good commands around it are accepted, and the reads still answer afterwards.

Every hostile input sits between two good ones; all go in a few batches, so the whole
matrix costs a handful of CLI runs a backend.
"""
from __future__ import annotations

import asyncio
import contextlib
import io
import json
import subprocess
from collections.abc import Iterator
from typing import Any

from commands.invisible import has_invisible
from commands.limits import id_chars_max, text_chars_max
from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import command, conflict, known, line
from tests.process import LEDGER

SURROGATE = "\ue000"  # a marker, written into the JSON as a lone surrogate escape: "\\u" + hex

# name -> value; surrogates go in as JSON escapes (a Python str cannot be encoded with one)
HOSTILE: dict[str, str] = {
    "nul": "a\x00b",
    "nul alone": "\x00",
    "c0 escape": "a\x1b[31mb",
    "c0 newline": "line\nbreak",
    "c0 tab": "a\tb",
    "del": "a\x7fb",
    "c1 nel": "a\x85b",
    "c1 last": "\x9f",
    "129 chars": "x" * (id_chars_max + 1),
    "10,000 chars": "y" * 10_000,
    "lone high surrogate": SURROGATE + "d800",
    "lone low surrogate": "a" + SURROGATE + "dfff",
    "rtl override": "\u202eevil",
    "rtl inside": "abc\u202edef",
    "whitespace": " ",
    "ideographic space": "\u3000\u3000",
    "emoji": "\U0001f6d2 cart",
    "zero-width space": "shop-1\u200b",
    "bidi isolate": "a\u2066b\u2069",
    "variation selector": "a\ufe0f\U000e0100",
    "grapheme joiner": "a\u034fb",
    "hangul filler": "\u3164",
    "tag letters": "a\U000e0041\U000e007f",
    "braille blank": "a\u2800b",
    "small capitals": "\u1d04\u1d00\u029f\u029f",
}

ENVELOPE_IDS = ("command_id", "business_id")
TURN_IDS = ("agent_id", "conversation_id", "turn_id")


def facts_of(kind: str) -> dict[str, Any]:
    """A command of each type that reads (its facts known), and the kind of each text field."""
    return {
        "PlaceOrder": {"customer_id": known("cust-1", "session"), "lines": known([line("rice", 1)], "message"),
                       "note": known("by noon", "message")},
        "IssuePaymentLink": {"order_id": known("ord-1", "session")},
        "Escalate": {"reason": known("please call", "message")},
        "CompleteTurn": {"reply": known("Thank you", "draft")},
        "RegisterProduct": {"sku": known("rice"), "name": known("Rice"), "unit_price": known(100), "stock": known(5)},
        "Restock": {"sku": known("rice"), "quantity": known(1)},
        "SetPrice": {"sku": known("rice"), "unit_price": known(1)},
        "RegisterCustomer": {"customer_id": known("cust-9"), "name": known("Ada"), "credit_limit": known(10)},
        "SetCreditLimit": {"customer_id": known("cust-9"), "credit_limit": known(10)},
        "AcknowledgeEscalation": {"escalation_id": known("esc-1")},
        "CloseEscalation": {"escalation_id": known("esc-1"), "resolution": known("resolved"), "note": known("done")},
        "ApproveOrder": {"escalation_id": known("esc-1"), "note": known("ok")},
    }[kind]


AGENT_TYPES = ("PlaceOrder", "IssuePaymentLink", "Escalate", "CompleteTurn")
OWNER_TYPES = ("RegisterProduct", "Restock", "SetPrice", "RegisterCustomer", "SetCreditLimit",
               "AcknowledgeEscalation", "CloseEscalation", "ApproveOrder")
ID_FACTS = {"customer_id", "order_id", "sku", "escalation_id"}
TEXT_FACTS = {"note", "reason", "reply", "name"}


def fields(kind: str) -> Iterator[tuple[tuple, str]]:
    """(path into the command, what the contract makes of it): every text field of the type."""
    for name in ENVELOPE_IDS + (TURN_IDS if kind in AGENT_TYPES else ()):
        yield (name,), "id"
    yield ("type",), "type"
    for name, fact in facts_of(kind).items():
        yield ("facts", name, "source"), "source"
        if name in ID_FACTS:
            yield ("facts", name, "value"), "id"
        elif name in TEXT_FACTS:
            yield ("facts", name, "value"), "text"
        elif name == "resolution":
            yield ("facts", name, "value"), "enum"
        elif name == "lines":
            yield ("facts", name, "value", 0, "sku"), "id"
    if kind == "Escalate":  # a conflict's candidates are the sender's text too (and blocks keep them)
        yield ("facts", "reason"), "conflict"


def broken(field_kind: str, value: str) -> bool | None:
    """Whether section 11 makes the command rejected/malformed; None where it is silent."""
    if SURROGATE in value:
        return True  # not valid JSON text
    if field_kind in ("type", "enum"):
        return True
    if field_kind == "id":
        return (len(value) > id_chars_max or value.isspace() or has_invisible(value)
                or any(ord(ch) < 0x20 or 0x7f <= ord(ch) <= 0x9f for ch in value))
    if field_kind == "text":
        return "\x00" in value or len(value) > text_chars_max
    return None


def _set(obj: dict, path: tuple, value: Any) -> None:
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value


def encode(cmd: dict) -> bytes:
    text = json.dumps(cmd, ensure_ascii=False)
    return text.replace(SURROGATE, "\\u").encode("utf-8")


def good(kind: str, n: int, business: str) -> dict:
    if kind == "agent":
        return command("CompleteTurn", {"reply": known("Noted", "draft")}, business, command_id=f"good-{kind}-{n}",
                       conversation="conv-good", turn=f"turn-{n}")
    return command("RegisterCustomer", {"customer_id": known(f"good-{n}"), "name": known("Good"),
                                        "credit_limit": known(1)}, business, command_id=f"good-{kind}-{n}")


def matrix(door: str, business: str) -> tuple[list[bytes], list[tuple[str, str, str, str, bool | None]]]:
    """The door's lines, good and hostile alternating, and what each hostile one is."""
    lines, cases, n = [encode(good(door, 0, business))], [], 1
    for kind in (AGENT_TYPES if door == "agent" else OWNER_TYPES):
        for path, field_kind in fields(kind):
            for name, value in HOSTILE.items():
                cmd = command(kind, facts_of(kind), business, command_id=f"hostile-{door}-{n}")
                if field_kind == "conflict":
                    _set(cmd, path, conflict(value, "other", source="message"))
                else:
                    _set(cmd, path, value)
                lines += [encode(cmd), encode(good(door, n, business))]
                cases.append((kind, ".".join(map(str, path)), field_kind, name, broken(field_kind, value)))
                n += 1
        for key in (*ENVELOPE_IDS, "type", "facts", "status", "value", "source"):  # a key twice: malformed
            cmd = encode(command(kind, facts_of(kind), business, command_id=f"hostile-{door}-{n}"))
            lines += [_said_twice(cmd, key), encode(good(door, n, business))]
            cases.append((kind, key, "duplicate key", f"{key} twice", True))
            n += 1
    return lines, cases


def _said_twice(line: bytes, key: str) -> bytes:
    """The line with its first `key` written twice: first as null, then as given."""
    start = line.index(f'"{key}": '.encode())
    return line[:start] + f'"{key}": null, '.encode() + line[start:]


def check(outcomes: list[dict], cases: list[tuple], door: str) -> None:
    assert len(outcomes) == 2 * len(cases) + 1
    for i, outcome in enumerate(outcomes[::2]):
        assert (outcome["command_id"], outcome["status"]) == (f"good-{door}-{i}", "accepted"), (cases[i - 1:i + 1], outcome)
    for case, outcome in zip(cases, outcomes[1::2]):
        kind, path, field_kind, name, rejected = case
        assert outcome["status"] in ("accepted", "blocked", "rejected"), case
        if rejected is True:
            assert (outcome["status"], outcome["reason"]) == ("rejected", "malformed"), (case, outcome)
            if path in ENVELOPE_IDS and SURROGATE not in HOSTILE.get(name, ""):
                assert outcome[path] is None, case  # an envelope id that breaks the rule is unreadable
        elif rejected is False:
            assert outcome["status"] != "rejected", (case, outcome)


def run(*args: str, stdin: bytes) -> bytes:
    """A door of the command line, as its own process: stdout."""
    done = subprocess.run([LEDGER, *args], input=stdin, capture_output=True, timeout=300)
    assert done.returncode == 0, (args, done.stderr.decode(errors="replace")[-2000:])
    return done.stdout


def read(*args: str) -> bytes:
    """A read of the command line, in this process (a process each cost ~1 s of start-up): stdout."""
    from consumers.cli import main

    out = io.TextIOWrapper(io.BytesIO(), write_through=True)
    with contextlib.redirect_stdout(out):
        assert main(list(args)) == 0, args
    return out.buffer.getvalue()


def json_lines(out: bytes) -> list[dict]:
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def the_reads_answer(db_url: str) -> None:
    events = json_lines(read("events", "--db", db_url))
    for view in ("intents", "blocks", "orders", "escalations"):
        json_lines(read("audit", view, "--db", db_url))
    assert json_lines(read("replay", "--db", db_url))[-1]["events"] == len(events)


PAGES = ("/", "/api/queue", "/queue/items", "/blocks", "/intents", "/orders", "/customers", "/products")


def the_web_pages_answer(db_url: str, *businesses: str) -> None:
    import aiohttp

    from consumers.http.web.app import start
    from consumers.runtime import Follow, bootstrap
    from consumers.http.web.auth import Auth
    from tests.web_support import register_owner

    tokens = [f"lot_{n:043d}" for n, _ in enumerate(businesses)]

    async def pages() -> list[int]:
        store = Store(db_url)
        for business, token in zip(businesses, tokens):
            register_owner(store, business, token)
        runner = await start(bootstrap(store, follow=Follow.before_reads), Auth(store), "127.0.0.1:0")
        host, port = runner.addresses[0][:2]
        statuses = []
        try:
            async with aiohttp.ClientSession() as session:
                for token in tokens:
                    for path in PAGES:
                        async with session.get(f"http://{host}:{port}{path}", allow_redirects=False,
                                               headers={"Authorization": f"Bearer {token}"}) as r:
                            await r.read()
                            statuses.append(r.status)
        finally:
            await runner.cleanup()
            store.close()
        return statuses

    assert asyncio.run(pages()) == [200] * len(PAGES) * len(tokens)


def test_every_hostile_text_gets_its_one_outcome_and_the_reads_still_answer(db_url):
    store = Store(db_url)
    store.create_tables()
    ledger = Ledger(store)
    try:
        for door in ("owner", "agent"):  # through Ledger.handle, the one write path every door shares
            lines, cases = matrix(door, "shop-handle")
            check(ledger.handle(lines, door).outcomes, cases, door)
    finally:
        store.close()

    for door, verb in (("owner", ("admin", "apply")), ("agent", ("process",))):  # through the command line
        lines, cases = matrix(door, "shop-cli")
        check(json_lines(run(*verb, "-", "--db", db_url, stdin=b"\n".join(lines) + b"\n")), cases, door)

    the_reads_answer(db_url)
    the_web_pages_answer(db_url, "shop-handle", "shop-cli")


def test_a_customer_id_of_300_characters_is_malformed_and_nothing_downstream_sees_it(db_url):
    store = Store(db_url)
    store.create_tables()
    ledger = Ledger(store)
    long_id = "c" * 300
    try:
        [registered] = ledger.handle([encode(command("RegisterCustomer", {
            "customer_id": known(long_id), "name": known("Long"), "credit_limit": known(10)}))], "owner").outcomes
        [ordered, neighbour] = ledger.handle([
            encode(command("PlaceOrder", {"customer_id": known(long_id, "session"),
                                          "lines": known([line("rice", 1)], "message")})),
            encode(good("agent", 0, "shop-1"))], "agent").outcomes

        assert (registered["status"], registered["reason"]) == ("rejected", "malformed")
        assert (ordered["status"], ordered["reason"]) == ("rejected", "malformed")
        assert neighbour["status"] == "accepted"
        assert long_id not in store.load("shop-1").customers
    finally:
        store.close()
    the_reads_answer(db_url)
    assert long_id.encode() not in read("audit", "blocks", "--db", db_url)
