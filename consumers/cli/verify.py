"""`ledger verify`: recompute the log's hash chain (CONTRACT 12) and say where it breaks."""
from __future__ import annotations

import argparse
import re

from consumers.cli.common import UsageError, add_db, emit, open_store

_HEAD = re.compile(r"(\d+):([0-9a-fA-F]{64})")


def register(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser("verify", help="recompute the log's hash chain; exit 1 at the first event altered, "
                                      "removed, inserted or reordered")
    how = v.add_mutually_exclusive_group()
    how.add_argument("--head", action="store_true",
                     help='print the verified head {"position", "hash"}, to keep somewhere else')
    how.add_argument("--since-head", metavar="POSITION:HASH",
                     help="also check the log still extends a head kept before (from --head)")
    add_db(v)
    v.set_defaults(run=verify)


def verify(args: argparse.Namespace) -> int:
    from ledger.chain import verify_store

    anchor = None
    if args.since_head is not None:
        found = _HEAD.fullmatch(args.since_head)
        if found is None:
            raise UsageError("--since-head takes POSITION:HASH, the position and 64 hex digits `ledger verify --head` printed")
        anchor = (int(found[1]), bytes.fromhex(found[2]))
    verdict = verify_store(open_store(args, create=False), anchor)
    if verdict.ok and args.head:
        emit({"position": verdict.position, "hash": verdict.hash.hex()})
    else:
        emit(verdict.report())
    return 0 if verdict.ok else 1
