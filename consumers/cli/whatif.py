"""`ledger whatif`: the log's commands, as claimed, decided again under other facts or rules.

Reads the log and nothing else writes: the live log and projections are left as they are;
the what-if world lives in this process (ledger/whatif.py). JSON Lines on stdout: each
decision whose outcome changed, then the totals before and after with a checksum of the
report; `--log` adds every event the what-if world appended; `--table` is for people.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from consumers.cli.common import UsageError, add_db, emit, open_input, open_store, since

whatif_source = "whatif"  # the source of every fact a --set change states


def register(sub: argparse._SubParsersAction) -> None:
    w = sub.add_parser("whatif", help="decide the log's commands again under changed facts or rules; "
                                      "print the outcomes that would change")
    w.add_argument("--business", help="this business's commands only (needed by --set)")
    w.add_argument("--since", type=since, metavar="POSITION|TIME", help="decide again from here (earlier ones as recorded)")
    w.add_argument("--until", type=since, metavar="POSITION|TIME", help="up to and including here")
    w.add_argument("--set", action="append", default=[], metavar="'TYPE VALUE... [@POSITION|@TIME]'",
                   help="an owner command in the changed world, its required facts in order, e.g. "
                        "'SetCreditLimit cust-ada 500000 @2026-11-01' (from the start without @)")
    w.add_argument("--changes", metavar="FILE|-", help="owner commands as JSON Lines, each with an optional \"at\"")
    w.add_argument("--rules", metavar="MODULE|PATH.py", help="a module whose decide(state, command, stamp) replaces the ledger's")
    w.add_argument("--expect-unchanged", action="store_true", help="exit 1 when any outcome would change")
    w.add_argument("--log", action="store_true", help="also print every event the what-if world appends")
    w.add_argument("--table", action="store_true", help="readable output for people")
    add_db(w)
    w.set_defaults(run=whatif)


def whatif(args: argparse.Namespace) -> int:
    from ledger import whatif as wi

    changes = [*_set_changes(args), *_file_changes(args)]
    replay = wi.Replay(_rules(args.rules), changes, _bound(args.since))
    store = open_store(args, create=False)
    try:
        report = _Report(args)
        for redecided in replay.feed(_stretch(store, args)):
            report.add(redecided)
        report.close(replay)
    finally:
        replay.close()
        store.close()
    return 1 if args.expect_unchanged and report.changed else 0


def _stretch(store: Any, args: argparse.Namespace) -> Any:
    until = _bound(args.until)
    for position, e in store.notifications(business_id=args.business):
        if until is not None and (position > until if isinstance(until, int) else e.recorded_at > until):
            return
        yield position, e


def _bound(value: str | None) -> int | str | None:
    return int(value) if value is not None and value.isdigit() else value


class _Report:
    def __init__(self, args: argparse.Namespace) -> None:
        from ledger import whatif as wi

        self.args, self.wi = args, wi
        self.decisions = self.changed = self.external = 0
        self.lines: list[bytes] = []  # the report's own lines, for its checksum
        self.rows: list[dict[str, Any]] = []

    def add(self, r: Any) -> None:
        from ledger.core import events as ev

        self.decisions += 1
        self.external += bool(r.external)
        if self.args.log:
            for e in r.events:
                self._out({"kind": "event", **ev.event_row(r.position, e)})
        if not r.changed:
            return
        self.changed += 1
        self._out({"kind": "changed", "position": r.position, "business_id": r.business_id,
                   "command_id": r.command_id, "type": r.kind, "why": _why(r.before, r.after),
                   "before": r.before, "after": r.after, "external": r.external})

    def close(self, replay: Any) -> None:
        before, after = replay.totals()
        totals = {"kind": "totals", "decisions": self.decisions, "changed": self.changed, "external": self.external,
                  "changes": [{"position": a.position, "command": a.change.command, "status": a.after["status"],
                               "reason": a.after["reason"]} for a in replay.applied],
                  "not_applied": [c.command for c in replay.waiting],
                  "before": before, "after": after}
        from ledger.core import codec

        totals["checksum"] = self.wi.checksum([*self.lines, codec.dumps(totals)])
        if self.args.table:
            _print_people(self.rows, totals)
        else:
            emit(totals)

    def _out(self, row: dict[str, Any]) -> None:
        from ledger.core import codec

        self.lines.append(codec.dumps(row))
        if self.args.table:
            if row["kind"] == "changed":
                self.rows.append(row)
        else:
            emit(row)


def _why(before: dict[str, Any], after: dict[str, Any]) -> str:
    def said(o: dict[str, Any]) -> str:
        return o["status"] + (f" ({o['reason']})" if o.get("reason") else "")
    if said(before) != said(after):
        return f"{said(before)} -> {said(after)}"
    return "same status, other " + ", ".join(k for k in after if after[k] != before.get(k))


def _print_people(rows: list[dict[str, Any]], totals: dict[str, Any]) -> None:
    from consumers.cli.table import print_table

    print_table([{"position": r["position"], "command_id": r["command_id"], "type": r["type"], "why": r["why"],
                  "order_id": r["after"].get("order_id") or r["before"].get("order_id")} for r in rows],
                ["position", "command_id", "type", "order_id", "why"])
    sys.stdout.write(f"\n{totals['changed']} of {totals['decisions']} decisions would change"
                     f" ({totals['external']} depended on the world outside the log)\n")
    from consumers.money import money

    print_table([{"world": name, **totals[name],
                  "owed": ", ".join(money(o["amount"], o["currency"]) for o in totals[name]["owed"])}
                 for name in ("before", "after")],
                ["world", "orders_placed", "owed", "escalations", "blocks"])
    sys.stdout.write(f"checksum {totals['checksum']}\n")


# --- the changed world ---------------------------------------------------------

def _set_changes(args: argparse.Namespace) -> list[Any]:
    if args.set and args.business is None:
        raise UsageError("--set needs --business: the business the change is made in")
    return [_change(args.business, i, text) for i, text in enumerate(args.set)]


def _change(business_id: str, i: int, text: str) -> Any:
    from commands.models import OWNER_TYPES
    from ledger import whatif as wi

    words = text.split()
    at = None
    if words and words[-1].startswith("@"):
        at = _at(words.pop()[1:])
    if not words or words[0] not in OWNER_TYPES:
        raise UsageError(f"--set {text!r}: begins with an owner command type ({', '.join(sorted(OWNER_TYPES))})")
    model = OWNER_TYPES[words[0]]
    names = [n for n in model.model_fields["facts"].annotation.names()
             if n in model.model_fields["facts"].annotation.required_names()]
    if len(words) - 1 != len(names):
        raise UsageError(f"--set {text!r}: {words[0]} takes {len(names)} values: {' '.join(names)}")
    values = [int(w) if w.isdigit() else w for w in words[1:]]
    command = {"command_id": f"whatif-set-{i}", "type": words[0], "business_id": business_id,
               "facts": {n: {"status": "known", "value": v, "source": whatif_source} for n, v in zip(names, values)}}
    parsed = wi.parse_change(command)
    if isinstance(parsed, str):
        raise UsageError(f"--set {text!r}: {parsed}")
    return wi.Change(command, at)


def _at(text: str) -> int | str:
    try:
        return _bound(since(text))  # type: ignore[return-value]
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"@{text}: {exc}") from None


def _file_changes(args: argparse.Namespace) -> list[Any]:
    from commands.json_keys import duplicated
    from ledger.core import codec
    from ledger import whatif as wi

    if args.changes is None:
        return []
    found = []
    with open_input(args.changes) as stream:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                command = codec.loads(line)
            except ValueError as exc:
                raise UsageError(f"--changes line {number}: not JSON ({exc})") from None
            if not isinstance(command, dict):
                raise UsageError(f"--changes line {number}: not a JSON object")
            twice = duplicated(line, codec.dumps(command))
            if twice is not None:
                raise UsageError(f"--changes line {number}: a key given twice ({', '.join(twice[0])})")
            at = command.pop("at", None)
            parsed = wi.parse_change(command)
            if isinstance(parsed, str):
                raise UsageError(f"--changes line {number}: {parsed}")
            found.append(wi.Change(command, _at(str(at)) if at is not None else None))
    return found


def _rules(name: str | None) -> Any:
    """The `decide` a rules module provides, or the ledger's own."""
    from ledger.core.decide import decide

    if name is None:
        return decide
    try:
        if name.endswith(".py"):
            spec = importlib.util.spec_from_file_location("ledger_whatif_rules", Path(name))
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot load {name}")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(name)
    except (ImportError, OSError, SyntaxError) as exc:
        raise UsageError(f"--rules {name}: {exc}") from None
    found = getattr(module, "decide", None)
    if not callable(found):
        raise UsageError(f"--rules {name}: the module has no decide(state, command, stamp)")
    return found
