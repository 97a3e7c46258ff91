"""How fast `ledger whatif` decides a log again, against `ledger replay` over the same log.

    .venv/bin/python -m bench.whatif --events 1000000 [--db URL]

The log is bench.synthetic's, with every command's claim on its first event (what `decide`
writes), so each command is decided again as a real log's would be. Both are timed in this
process, in CPU seconds (a shared machine's other work stretches the wall clock; on PostgreSQL
the server's backends' CPU for each is added, as a replay's inserts are the server's work), and the
what-if's resident memory is read after a tenth of its decisions and at the end: flat means
the state it holds does not grow with the log. Prints one JSON line.
"""
from __future__ import annotations

import argparse
import dataclasses
import resource
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson

from bench import synthetic
from bench.replay import _timed
from bench.serve import Helpers
from ledger.core import events as ev
from ledger.core.decide import link_reference
from ledger.store.database import Store
from ledger.whatif import Replay
from projections.projector import Projector


def _known(value: object, source: str = "session") -> dict:
    return {"status": "known", "value": value, "source": source}


def _claim(e: ev.Event) -> dict | None:
    """The command that appended `e`, as an agent or owner claimed it; None for the events
    no command of the script begins with (the catalog, payments, rejections)."""
    kind, facts = _FACTS.get(type(e), (None, None))
    if kind is None or e.command_id is None:
        return None
    if type(e) is ev.CommandBlocked:
        kind, facts = _BLOCKED[e.reason]
    return {"command_id": e.command_id, "type": kind, "business_id": e.business_id, "agent_id": e.agent_id,
            "conversation_id": e.conversation_id, "turn_id": e.turn_id, "facts": facts(e)}


_FACTS = {
    ev.CommandBlocked: ("", None),
    ev.ReplyRecorded: ("CompleteTurn", lambda e: {"reply": _known(e.reply)}),
    ev.OrderPlaced: ("PlaceOrder", lambda e: {"customer_id": _known(e.customer_id), "lines": _known(
        [{"sku": line["sku"], "quantity": line["quantity"]} for line in e.lines])}),
    ev.PaymentLinkIssued: ("IssuePaymentLink", lambda e: {"order_id": _known(e.order_id)}),
    ev.EscalationRaised: ("Escalate", lambda e: {"reason": _known(e.reason)}),
    ev.EscalationClosed: ("CloseEscalation", lambda e: {"escalation_id": _known(e.escalation_id, "owner"),
                                                        "resolution": _known(e.resolution, "owner")}),
}
_BLOCKED = {
    "unknown_facts": ("PlaceOrder", lambda e: {"customer_id": _known("cust-0"), "lines": {"status": "unknown"}}),
    "unknown_order": ("IssuePaymentLink", lambda e: {"order_id": _known("ord-x")}),
}


def claimed_events(count: int, businesses: int) -> Iterator[ev.Event]:
    """bench.synthetic's log, each command's claim on its first event and each link's reference
    what `decide` derives from its command (the payment to it follows)."""
    references: dict[str, str] = {}
    for e in synthetic.events(count, businesses):
        if type(e) is ev.PaymentLinkIssued:
            references[e.reference] = link_reference(e.business_id, e.command_id)
        if type(e) in (ev.PaymentLinkIssued, ev.PaymentReceived):
            e = dataclasses.replace(e, reference=references.pop(e.reference) if type(e) is ev.PaymentReceived
                                    else references[e.reference])
        claim = _claim(e)
        yield e if claim is None else dataclasses.replace(e, claimed=claim)


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def whatif(store: Store, events: int) -> dict:
    replay = Replay()
    checkpoint = max(1, events // 10)
    decisions = changed = 0
    rss_tenth = 0.0
    for position, r in enumerate(replay.feed(store.notifications()), 1):
        decisions += 1
        changed += r.changed
        if decisions == checkpoint:
            rss_tenth = _rss_mb()
    return {"decisions": decisions, "changed": changed, "rss_tenth_mb": round(rss_tenth, 1),
            "rss_end_mb": round(_rss_mb(), 1)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench.whatif", description=__doc__.splitlines()[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--businesses", type=int, default=10)
    p.add_argument("--db", metavar="URL", help="SQLAlchemy URL of an empty database (else a temporary SQLite file)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(args.db or f"sqlite:///{Path(tmp) / 'bench.db'}")
        store.create_tables()
        synthetic.fill(store, args.events, args.businesses, claimed_events)
        server = Helpers([], store.url)  # on PostgreSQL, the server's backends work for the replay too
        done, replay_wall, replay_cpu = _timed(Projector(store).replay)
        replay_server = server.used_s().get("postgres", 0.0)
        server = Helpers([], store.url)
        found, whatif_wall, whatif_cpu = _timed(lambda: whatif(store, args.events))
        whatif_server = server.used_s().get("postgres", 0.0)
        store.close()
    sys.stdout.write(orjson.dumps({
        "backend": store.engine.dialect.name, "events": done.events, **found,
        "replay_cpu_s": round(replay_cpu, 2), "replay_s": round(replay_wall, 2),
        "whatif_cpu_s": round(whatif_cpu, 2), "whatif_s": round(whatif_wall, 2),
        "server_cpu_s": {"replay": round(replay_server, 2), "whatif": round(whatif_server, 2)},
        "whatif_vs_replay_cpu": round((replay_cpu + replay_server) / (whatif_cpu + whatif_server), 3),
    }).decode() + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
