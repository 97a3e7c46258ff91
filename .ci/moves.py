"""Rewrites imports and paths of ledger modules to their rooms: `python .ci/moves.py FILE...`.

ledger/ was one flat package; its pure core moved to ledger/core/ and its store to
ledger/store/ (ledger/store.py itself became ledger/store/database.py, and ledger/payments.py
ledger/providers/base.py). Code written against
the old names (a branch started before the move) is brought up to date by this script; it is
idempotent, so running it on code already moved changes nothing.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

CORE = ("events", "state", "decide", "promises", "outcome", "link_rules", "webhook", "codec",
        "event_docs")
STORE = ("sql", "pg", "lease", "urls", "recorder", "chain", "chain_verify", "claims",
         "claims_migration", "kept_orders", "kept_escalations", "snapshots", "log_indexes",
         "log_reads", "unsigned_webhooks", "principals", "agents", "owners")
# old module name under ledger -> its new dotted path under ledger
NEW = {**{name: f"core.{name}" for name in CORE}, **{name: f"store.{name}" for name in STORE},
       "store": "store.database", "payments": "providers.base"}

_FROM_LEDGER = re.compile(r"^(?P<indent>[ \t]*)from ledger import (?P<names>[^(\n]+?)(?P<tail>[ \t]*(#.*)?)$",
                          re.M)
# Only in import statements: `ledger` is also the usual name of a Ledger, and `ledger.events`
# a Kafka topic.
_DOTTED = re.compile(r"^(?P<head>[ \t]*(?:from|import) )ledger\.(?P<name>\w+)\b(?P<rest>[^\n]*)$", re.M)
_PATH = re.compile(r"(?<![\w/.])ledger/(?P<name>\w+)(?P<ext>\.py|\.txt)\b")
_RESOURCE = re.compile(r"resources\.files\(\"ledger\"\)\.joinpath\(\"promises\.txt\"\)")


def _split_from(match: re.Match[str]) -> str:
    """`from ledger import events as ev, sql, service` -> one line a room."""
    by_room: dict[str, list[str]] = {}
    for alias in (part.strip() for part in match["names"].split(",")):
        name, _, alias_rest = alias.partition(" ")
        new = NEW.get(name)
        if new is None:
            by_room.setdefault("ledger", []).append(alias)
        else:
            room, _, new_name = new.rpartition(".")
            by_room.setdefault(f"ledger.{room}", []).append(" ".join(
                [new_name] + ([alias_rest] if alias_rest else [] ) if new_name == name else
                [new_name, alias_rest or f"as {name}"]))
    lines = [f"{match['indent']}from {module} import {', '.join(names)}"
             for module, names in by_room.items()]
    lines[0] += match["tail"]
    return "\n".join(lines)


def _dotted(match: re.Match[str]) -> str:
    name, rest = match["name"], match["rest"]
    if name in ("store", "providers"):  # rooms now: a module of theirs is already moved
        following = re.match(r"\.(\w+)|\s+import\s+\(?\s*(\w+)", rest)
        if name == "providers" or (following and (following[1] or following[2]) in STORE + ("database",)):
            return match[0]
    new = NEW.get(name)
    return f"{match['head']}ledger.{new}{rest}" if new else match[0]


def _path(match: re.Match[str]) -> str:
    name, ext = match["name"], match["ext"]
    new = NEW.get(name) if ext == ".py" or name == "promises" else None
    return f"ledger/{new.replace('.', '/')}{ext}" if new else match[0]


def rewrite(text: str) -> str:
    text = _FROM_LEDGER.sub(_split_from, text)
    text = _DOTTED.sub(_dotted, text)
    text = _PATH.sub(_path, text)
    return _RESOURCE.sub('resources.files("ledger.core").joinpath("promises.txt")', text)


def main(paths: list[str]) -> int:
    for name in paths:
        path = Path(name)
        old = path.read_text(encoding="utf-8")
        new = rewrite(old)
        if new != old:
            path.write_text(new, encoding="utf-8")
            print(name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
