"""What the owner's door check costs a message, against reading the message alone.

    .venv/bin/python -m bench.owner_door [--messages 2000] [--batch 1|N] [--rounds 5]

Over a fresh SQLite ledger with 50 owners and 50 agents: `owner_door.admit` (the header
found, the tokens re-read if they changed: one tiny query a batch, the token hashed and
looked up once a batch, the principal compared) against `parse(raw, "owner")` alone, which
every owner command pays either way. Prints one JSON line: CPU microseconds a message of
each and their difference, the check's own cost (the best of `--rounds`).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time

from commands.parsing import parse
from consumers import agent_door, owner_door
from consumers.headers import TOKEN_HEADER
from ledger.store import agents, owners
from ledger.store.owners import OwnerKeys
from ledger.service import Ledger
from ledger.store.database import Store
from tests import builders as b

principals_count = 50


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.owner_door", description=__doc__.split("\n\n")[0])
    p.add_argument("--messages", type=int, default=2000)
    p.add_argument("--batch", type=int, default=1, help="messages a batch (serve's poll): 1 is a lone command")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args(argv)
    store = Store(f"sqlite:///{tempfile.mkdtemp(prefix='bench-owner-door-')}/ledger.db")
    store.create_tables()
    ledger = Ledger(store)
    tokens = [owners.register(ledger, f"shop-{n}", "ada") for n in range(principals_count)]
    for n in range(principals_count):
        agents.register(ledger, f"shop-{n}", "bot")
    keys = OwnerKeys(store)
    messages = [([(TOKEN_HEADER, tokens[n % principals_count].encode())],
                 b.raw(b.command("SetPrice", {"sku": b.known("sku-1"), "unit_price": b.known(n)},
                                 f"shop-{n % principals_count}", command_id=f"c-{n}")))
                for n in range(args.messages)]
    batches = [messages[i:i + args.batch] for i in range(0, len(messages), args.batch)]

    def checked() -> None:
        for batch in batches:
            owner_door.admit(keys, [(agent_door.header(h), v) for h, v in batch])

    def parsed() -> None:
        for batch in batches:
            [parse(v, "owner") for _, v in batch]

    check_us, parse_us = (min(_cpu(fn) for _ in range(args.rounds)) * 1e6 / len(messages) for fn in (checked, parsed))
    print(json.dumps({"messages": len(messages), "batch": args.batch, "admit_us": round(check_us, 2),
                      "parse_us": round(parse_us, 2), "check_us": round(check_us - parse_us, 2)}))
    store.close()
    return 0


def _cpu(fn) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


if __name__ == "__main__":
    sys.exit(main())
