"""The fuzzer: sloppy agent output through the real ledger, and proof that none of it leaked.

A leak is an input without every required fact known (judged here, from the raw bytes,
by our own reading of CONTRACT sections 3-4, never by the ledger's code) that
  - got an `accepted` outcome, or an outcome listing an effect event; or
  - is the cause (by command_id) of an effect event in the log; or
  - left the shop's stock or a customer's exposure other than what the known, accepted
    orders alone explain (recomputed here from the seeded prices and the inputs' lines).
The run is deterministic: the same seed gives the same inputs, ids and counts.
"""
from __future__ import annotations

import itertools
import json
import unicodedata
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from consumers.agent.sloppy import Shop, Sloppy
from ledger.service import Ledger
from ledger.store.database import Store

# CONTRACT section 4, written out: the checker must not ask the models what is required.
REQUIRED = {"PlaceOrder": ("customer_id", "lines"), "IssuePaymentLink": ("order_id",),
            "Escalate": (), "CompleteTurn": ("reply",)}
EFFECTS = frozenset({"OrderPlaced", "PaymentLinkIssued", "PaymentLinkResent", "PaymentLinkVoided"})
PRICES = {"rice-50kg": 45000, "beans-25kg": 30000, "oil-5l": 12000, "sugar-1kg": 1500, "salt-500g": 0}
STOCK = {"rice-50kg": 100_000, "beans-25kg": 100_000, "oil-5l": 100_000, "sugar-1kg": 100_000, "salt-500g": 25}
CREDIT = {"cust-1": 10 ** 15, "cust-2": 10 ** 15, "cust-3": 100_000, "cust-0": 0}
batch_records_max = 500
finding_excerpt_chars = 300


class ShopTaken(Exception):
    """The fuzz business already exists in this database: counts would not add up."""


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def every_required_known(raw: bytes) -> bool:
    """Our own reading of "known" (CONTRACT 3): status known, a non-empty value, a non-empty
    string source; an absent required fact is unknown; anything unreadable knows nothing."""
    try:
        cmd = json.loads(raw, object_pairs_hook=_each_key_once)
    except ValueError:  # not JSON, or a key twice: the document says two things
        return False
    if not (isinstance(cmd, dict) and isinstance(cmd.get("facts"), dict) and isinstance(cmd.get("type"), str)
            and cmd["type"] in REQUIRED) or not all(_seen(cmd.get(name)) for name in _ENVELOPE_IDS):
        return False
    facts = cmd["facts"]
    for name in REQUIRED[cmd["type"]]:
        fact = facts.get(name)
        if not (isinstance(fact, dict) and fact.get("status") == "known" and not _empty(fact.get("value"))
                and isinstance(fact.get("source"), str) and fact["source"] != ""
                and (name not in _ID_FACTS or _seen(fact["value"]))):
            return False
    return True


_ENVELOPE_IDS = ("business_id", "command_id", "agent_id", "conversation_id", "turn_id")
_ID_FACTS = ("customer_id", "order_id")


def _each_key_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    if len({key for key, _ in pairs}) != len(pairs):
        raise ValueError("a key twice")
    return dict(pairs)


def _seen(value: Any) -> bool:
    """An id a person reads as written: no format (Cf) character, variation selector or filler."""
    return not isinstance(value, str) or not any(
        unicodedata.category(c) == "Cf" or 0xFE00 <= ord(c) <= 0xFE0F or 0xE0100 <= ord(c) <= 0xE01EF
        or c in "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u3164\uffa0" for c in value)


@dataclass
class Report:
    seed: int
    inputs: int = 0
    counts: Counter = field(default_factory=Counter)   # accepted_valid, blocked, rejected, duplicate
    reasons: Counter = field(default_factory=Counter)
    findings: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        return {"seed": self.seed, "inputs": self.inputs, "blocked": self.counts["blocked"],
                "rejected": self.counts["rejected"], "accepted_valid": self.counts["accepted_valid"],
                "duplicates": self.counts["duplicate"], "leaks": len(self.findings),
                "reasons": dict(sorted(self.reasons.items())), "seconds": round(self.seconds, 3),
                "inputs_per_s": round(self.inputs / self.seconds) if self.seconds else None}


def deterministic_ledger(store: Store, seed: int) -> Ledger:
    """Fixed clock and counter ids: the same seed replays the same run."""
    ids = itertools.count(1)
    return Ledger(store, now=lambda: "2026-01-01T00:00:00.000000Z",
                  new_id=lambda: f"fuzz{seed}-{next(ids):08d}")


def seed_shop(ledger: Ledger, business_id: str) -> Shop:
    def owner(n: int, kind: str, facts: dict[str, Any]) -> bytes:
        return orjson.dumps({"command_id": f"{business_id}-seed-{n}", "type": kind, "business_id": business_id,
                             "facts": {k: {"status": "known", "value": v, "source": "owner"} for k, v in facts.items()}})
    commands = [owner(i, "RegisterProduct", {"sku": sku, "name": sku, "unit_price": PRICES[sku], "stock": STOCK[sku]})
                for i, sku in enumerate(PRICES)]
    commands += [owner(len(PRICES) + i, "RegisterCustomer", {"customer_id": c, "name": c, "credit_limit": limit})
                 for i, (c, limit) in enumerate(CREDIT.items())]
    if ledger.state(business_id).version:
        raise ShopTaken(f"business {business_id} already has events in this database: "
                        "use another --seed or a fresh --db")
    refused = [o for o in ledger.handle(commands, "owner").outcomes if o["status"] != "accepted" or o["duplicate"]]
    if refused:
        raise ShopTaken(f"business {business_id} could not be seeded: {refused[0]['reason'] or 'duplicate'}")
    return Shop(business_id, dict(PRICES), list(CREDIT))


def run(ledger: Ledger, count: int, seed: int, progress: Callable[[int], None] | None = None) -> Report:
    report = Report(seed=seed)
    started = time.perf_counter()
    shop = seed_shop(ledger, f"fuzz-{seed}")
    sloppy = Sloppy(seed, shop)
    stock, exposure = dict(STOCK), dict.fromkeys(CREDIT, 0)
    for start in range(0, count, batch_records_max):
        raws = sloppy.batch(min(batch_records_max, count - start), start)
        position = ledger.store.max_position()
        try:
            outcomes = ledger.handle(raws, "agent").outcomes
        except Exception as exc:  # a crash is a finding too: the batch took no effect, stop here
            _find(report, "crash", None, type(exc).__name__, [str(exc)[:finding_excerpt_chars], start])
            break
        known = [every_required_known(raw) for raw in raws]
        for raw, ok, out in zip(raws, known, outcomes):
            _count(report, raw, ok, out)
            if (ok and out["status"] == "accepted" and not out["duplicate"] and out["type"] == "PlaceOrder"
                    and out["business_id"] == shop.business_id):
                _explain(json.loads(raw)["facts"], stock, exposure)
                shop.orders.append(out["order_id"])
        _check_log(report, ledger.store, position, raws, known)
        report.inputs += len(raws)
        if progress:
            progress(report.inputs)
    _check_state(report, ledger.store, shop.business_id, stock, exposure)
    report.seconds = time.perf_counter() - started
    return report


def _count(report: Report, raw: bytes, ok: bool, out: dict[str, Any]) -> None:
    report.counts["duplicate"] += bool(out.get("duplicate"))
    report.reasons[out["reason"] or "accepted"] += 1
    if out["status"] == "accepted" and ok:
        report.counts["accepted_valid"] += 1
    elif out["status"] in ("blocked", "rejected"):
        report.counts[out["status"]] += 1
    if not ok and (out["status"] == "accepted" or EFFECTS & set(out["events"])):
        _find(report, "outcome", raw, out["status"], out["events"])


def _explain(facts: dict[str, Any], stock: dict[str, int], exposure: dict[str, int]) -> None:
    """What a known, accepted order may change: stock by its lines, exposure by their price."""
    for line in facts["lines"]["value"]:
        stock[line["sku"]] -= line["quantity"]
        exposure[facts["customer_id"]["value"]] += line["quantity"] * PRICES[line["sku"]]


def _check_log(report: Report, store: Store, position: int, raws: list[bytes], known: list[bool]) -> None:
    by_id: dict[str, bool] = {}
    for raw, ok in zip(raws, known):
        try:
            command_id = json.loads(raw).get("command_id")
        except (ValueError, AttributeError):
            continue
        if isinstance(command_id, str):
            by_id[command_id] = by_id.get(command_id, False) or ok
    for _, event in store.notifications(position + 1, types=sorted(EFFECTS)):
        if not by_id.get(event.command_id or "", False):
            _find(report, "log", None, event.type, [event.command_id])


def _check_state(report: Report, store: Store, business_id: str, stock: dict[str, int], exposure: dict[str, int]) -> None:
    state = store.load(business_id)  # a fresh fold of what was written, not the ledger's cache
    actual_stock = {sku: p.available for sku, p in state.products.items()}
    actual_exposure = {c: customer.exposure for c, customer in state.customers.items()}
    if actual_stock != stock:
        _find(report, "stock", None, "changed", [actual_stock, stock])
    if actual_exposure != exposure:
        _find(report, "exposure", None, "changed", [actual_exposure, exposure])


def _find(report: Report, where: str, raw: bytes | None, what: str, evidence: list[Any]) -> None:
    excerpt = None if raw is None else raw[:finding_excerpt_chars].decode("utf-8", "replace")
    report.findings.append({"where": where, "what": what, "evidence": evidence, "raw": excerpt})
