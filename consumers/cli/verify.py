"""`ledger verify`: recompute the log's hash chain (CONTRACT 12) and say where it breaks."""
from __future__ import annotations

import argparse
import json
import re
from typing import Any

from consumers.cli.common import UsageError, add_db, emit, open_input, open_store

head_file_bytes_max = 4096  # `verify --head` prints ~100 bytes
position_max = 2**63 - 1    # a position is a signed 64-bit integer in both databases
_HASH = re.compile(r"[0-9a-fA-F]{64}")
_POSITION_HASH = re.compile(r"([0-9]{1,19}):([0-9a-fA-F]{64})")  # the earlier form, typed by hand
_HEAD_KEYS = {"position", "hash"}


def register(sub: argparse._SubParsersAction) -> None:
    v = sub.add_parser("verify", help="recompute the log's hash chain; exit 1 at the first event altered, "
                                      "removed, inserted or reordered")
    how = v.add_mutually_exclusive_group()
    how.add_argument("--head", action="store_true",
                     help='print the verified head {"position", "hash"}, to keep somewhere else')
    how.add_argument("--since-head", metavar="FILE|-",
                     help="also check the log still extends a head kept before: the JSON `ledger verify --head`"
                          " printed, in FILE or on stdin (-); POSITION:HASH is taken too")
    add_db(v)
    v.set_defaults(run=verify)


def verify(args: argparse.Namespace) -> int:
    from ledger.store.chain_verify import verify_store

    anchor = None if args.since_head is None else kept_head(args.since_head)
    verdict = verify_store(open_store(args, create=False), anchor)
    if verdict.ok and args.head:
        emit({"position": verdict.position, "hash": verdict.hash.hex()})
    else:
        emit(verdict.report())
    return 0 if verdict.ok else 1


def kept_head(given: str) -> tuple[int, bytes]:
    """The (position, link) of --since-head: POSITION:HASH as typed, else the JSON object that
    `verify --head` printed, read from the file named (or stdin for -). Anything else is a
    usage error that does not repeat what it read (it may hold anything)."""
    typed = _POSITION_HASH.fullmatch(given)
    if typed is not None:
        return _head(int(typed[1]), typed[2])
    with open_input(given) as source:
        text = source.read(head_file_bytes_max + 1)
    if len(text) > head_file_bytes_max:
        raise UsageError(f"--since-head: more than {head_file_bytes_max} bytes; give the one line `ledger verify --head` printed")
    try:
        head = json.loads(text.decode("utf-8-sig"), object_pairs_hook=_no_duplicate_keys)  # a BOM some editors add
    except (ValueError, RecursionError):  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        head = None
    if not (isinstance(head, dict) and head.keys() == _HEAD_KEYS):
        raise UsageError('--since-head: expected the JSON `ledger verify --head` printed: {"position": N, "hash": "<64 hex>"}')
    return _head(head["position"], head["hash"])


def _head(position: Any, digest: Any) -> tuple[int, bytes]:
    if type(position) is not int or not 0 <= position <= position_max:
        raise UsageError(f"--since-head: position must be a whole number from 0 to {position_max}")
    if type(digest) is not str or _HASH.fullmatch(digest) is None:
        raise UsageError("--since-head: hash must be 64 hex digits")
    return position, bytes.fromhex(digest)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a key given twice")
    return dict(pairs)
