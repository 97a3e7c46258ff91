"""The storage fuzzer's webhook leg (issue 13, CONTRACT 7 and 11): every field of the webhook
body x every hostile value, signed and unsigned, over HTTP, on SQLite and PostgreSQL.

Each request gets its answer (never a 500); a signed one records exactly one event, an
unsigned one none (it is only counted); and afterwards `ledger events`, every `ledger
audit` view and `ledger replay` still answer.
"""
from __future__ import annotations

import json

import orjson

from consumers.http.webhook import webhook_path
from ledger.providers.base import signature_header
from projections.columns import COLUMNS
from tests.given import an_order_with_a_link
from tests.projected import audit
from tests.inproc import jsonl, ledger_done
from tests.integration.test_payments_http import exchange

# Each hostile value as the JSON text that goes in the body (a lone surrogate can only be an escape).
VALUES = {
    "NUL": json.dumps("evt\x00x"),
    "C0 controls": json.dumps("evt\x07\x1b[2J"),
    "C1 controls": json.dumps("evt\x85\x9b"),
    "129 characters": json.dumps("x" * 129),
    "10,000 characters": json.dumps("x" * 10_000),
    "lone surrogate": '"evt\\ud800x"',
    "lone low surrogate": '"\\udfff"',
    "right-to-left override": json.dumps("evt\u202eabc", ensure_ascii=False),
    "zero-width space": json.dumps("shop-1\u200b", ensure_ascii=False),
    "variation selector": json.dumps("evt\ufe0f\U000e0100", ensure_ascii=False),
    "Hangul filler": json.dumps("\u3164", ensure_ascii=False),
    "tag letters": json.dumps("evt\U000e0041\U000e007f", ensure_ascii=False),
    "whitespace only": json.dumps(" \t\n "),
    "2^53": str(2**53),
    "2^63": str(2**63),
    "2^64": str(2**64),
    "-1": "-1",
    "1.5": "1.5",
}
FIELDS = ["id", "event", "data", "data.reference", "data.amount", "data.business_id"]
_HOLE = "\x00hole\x00"


def webhook_body(field: str, value_json: str, reference: str, event_id: str) -> bytes:
    body = {"id": event_id, "event": "charge.success",
            "data": {"reference": reference, "amount": 1000, "business_id": "shop-1"}}
    *path, last = field.split(".")
    holder = body
    for name in path:
        holder = holder[name]
    holder[last] = _HOLE
    return orjson.dumps(body).replace(orjson.dumps(_HOLE), value_json.encode())


def send_all(ledger, requests: list[tuple[bytes, dict[str, str]]]) -> list[tuple[int, dict]]:
    return exchange(ledger, *[("POST", webhook_path, body, headers) for body, headers in requests])


def test_every_hostile_webhook_field_is_answered_and_every_read_still_works(ledger, store, db_url):
    order_id, link = an_order_with_a_link(ledger)
    cases = [(f, v) for f in FIELDS for v in VALUES]
    bodies = [webhook_body(f, VALUES[v], link["reference"], f"fz-{i}") for i, (f, v) in enumerate(cases)]
    signed = [(b, {signature_header: ledger.provider.sign(b)}) for b in bodies]
    unsigned = [(b, {signature_header: "0" * 128}) for b in bodies]
    before = store.max_position()

    answers_unsigned = send_all(ledger, unsigned)
    after_unsigned = store.max_position()
    answers_signed = send_all(ledger, signed)

    assert [s for s, _ in answers_unsigned] == [401] * len(cases)
    assert after_unsigned == before  # nothing unsigned is in the log
    got = {case: (status, out.get("reason") or out.get("status")) for case, (status, out) in zip(cases, answers_signed)}
    # Invisible characters (format, bidi, default-ignorable) are no more an id than controls are.
    expected = {case: (400, "malformed") for case in cases}
    assert got == expected
    written = [e for _, e in store.notifications(before + 1)]
    assert len(written) == len(cases)  # one event for each signed request
    assert {e.type for e in written} == {"WebhookRefused"}

    for view in COLUMNS:  # every view, as `ledger audit` reads it
        audit(store, view)
    runs = {" ".join(argv): ledger_done(*argv, "--db", db_url)
            for argv in (["events"], ["audit", "blocks"], ["audit", "webhooks"], ["replay"])}
    assert {argv: done.returncode for argv, done in runs.items()} == dict.fromkeys(runs, 0), [
        done.stderr[-2000:] for done in runs.values()]
    assert len(jsonl(runs["audit blocks"].stdout)) == len(cases)
    assert sum(r["count"] for r in jsonl(runs["audit webhooks"].stdout)) == len(cases)
    assert store.load("shop-1").orders[order_id].paid == 0
