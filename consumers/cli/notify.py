"""`ledger notify --webhook URL`: post each escalation raised or closed to a person's webhook, signed."""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import sys
from urllib.parse import urlsplit

from consumers.cli.common import Failed, UsageError, add_db, bounded, day_ms, emit, int32_max, open_store
from consumers.cli.extras import require
from consumers.http.site import stop_on_signals

log = logging.getLogger("ledger.notify")
interval_ms_default = 1000
once_attempts_default = 5


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("notify", help="post each escalation raised or closed as signed JSON to a webhook, "
                                      "with retries; one JSON line per delivery")
    p.add_argument("--webhook", required=True, metavar="URL", help="http(s) URL that takes the POSTs")
    p.add_argument("--interval-ms", type=bounded(int, 1, day_ms), default=interval_ms_default, metavar="N",
                   help=f"how often to look at the log (default {interval_ms_default})")
    p.add_argument("--once", action="store_true",
                   help="deliver what is there and exit (1 if a raise or close could not be delivered)")
    p.add_argument("--attempts", type=bounded(int, 1, int32_max), metavar="N",
                   help=f"posts per raise or close before giving up for now (default: {once_attempts_default} "
                        "with --once, else no limit)")
    add_db(p)
    p.set_defaults(run=notify)


def notify(args: argparse.Namespace) -> int:
    require("web")
    from consumers.http.notify import Notifier, Undelivered, run, secret_from_env  # aiohttp: only when used

    url = urlsplit(args.webhook)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise UsageError(f"--webhook must be an http(s) URL, got {args.webhook!r}")
    if args.interval_ms <= 0:
        raise UsageError("--interval-ms must be positive")
    if args.attempts is not None and args.attempts <= 0:
        raise UsageError("--attempts must be positive")
    secret, is_default = secret_from_env()
    if is_default:
        log.warning("LEDGER_NOTIFY_SECRET (and LEDGER_PAYMENT_SECRET) not set: signing with the sandbox's "
                    "public default secret; anyone can forge these posts")
    attempts = args.attempts or (once_attempts_default if args.once else None)
    notifier = Notifier(open_store(args), args.webhook, secret, attempts)

    def delivered(d) -> None:
        emit(dataclasses.asdict(d))
        sys.stdout.flush()

    async def main() -> None:
        await run(notifier, args.interval_ms / 1000, stop_on_signals(), args.once, delivered)

    try:
        asyncio.run(main())
    except Undelivered as exc:
        raise Failed(str(exc)) from exc
    return 0
