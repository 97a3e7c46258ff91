"""`ledger demo`: a scripted WhatsApp conversation, end to end, on the embedded defaults.

The script (consumers/demo_data/conversation.jsonl: inside the package, so an installed
`ledger demo` finds it; examples/ links to it) holds what the customer says, the commands
the agent sends and the payments the provider confirms; `{{order:CMD}}` stands for the
order id that command CMD's outcome gave, so the script reads like the real exchange.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from consumers.cli.common import UsageError, add_db, open_runtime
from consumers.cli.table import describe
from consumers.money import money
from ledger.providers.base import signature_header

DEMO_DATA = Path(__file__).resolve().parents[1] / "demo_data"
_PLACEHOLDER = re.compile(r"\{\{order:([^}]+)\}\}")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="a scripted conversation end to end on the embedded defaults")
    p.add_argument("--script", type=Path, default=DEMO_DATA, metavar="DIR",
                   help="folder with shop.jsonl and conversation.jsonl")
    add_db(p)
    p.set_defaults(run=run)


def _lines(path: Path) -> list[str]:
    try:
        return [line for line in path.read_text("utf-8").splitlines() if line.strip()]
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from exc


def run(args: argparse.Namespace) -> int:
    runtime = open_runtime(args)  # the script is the operator's: no token is checked
    ledger = runtime.ledger
    out = sys.stdout.write
    out("== The owner sets up the shop ==\n")
    currency = lambda outcome: ledger.state(outcome["business_id"]).currency  # noqa: E731
    for outcome in runtime.handle(_lines(args.script / "shop.jsonl"), "owner").outcomes:
        out(describe(outcome, currency(outcome)) + "\n")
    outcomes: dict[str, dict[str, Any]] = {}
    out("\n== The conversation ==\n")
    for step in map(json.loads, _lines(args.script / "conversation.jsonl")):
        if "say" in step:
            out(f"\n💬 {step['say']}\n")
        elif "command" in step:
            text = _PLACEHOLDER.sub(lambda m: outcomes[m.group(1)]["order_id"], json.dumps(step["command"]))
            [outcome] = runtime.handle([text], "agent").outcomes
            outcomes[outcome["command_id"]] = outcome
            out("  agent → " + describe(outcome, currency(outcome)).replace("\n", "\n          ") + "\n")
        elif "pay" in step:
            pay = step["pay"]
            link = outcomes[pay["link_of"]]["payment_link"]
            body = json.dumps({"id": pay["id"], "event": "charge.success", "data": {
                "reference": link["reference"], "amount": pay["amount"],
                "business_id": outcomes[pay["link_of"]]["business_id"]}}).encode()
            result = runtime.handle_webhook(body, {signature_header: ledger.provider.sign(body)})
            paid = money(result["amount"], ledger.state(result["business_id"]).currency)
            out(f"  provider → paid {paid} on {result['reference']}: {result['status']}"
                + (f" [{result['reason']}]" if result["reason"] else "") + "\n")
    out("\nEvery line above is in the log: try `ledger events` and `ledger audit blocks --table`"
        " with the same --db.\n")
    return 0
