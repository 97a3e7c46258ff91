"""`ledger payments simulate` and `ledger webhook`: the provider door from the command line.

Both go through `Ledger.handle_webhook`, the path every provider call takes: simulate plays
the sandbox provider (builds and signs the charge a real one would send), webhook serves it
over HTTP.
"""
from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from consumers.cli.common import UsageError, add_db, add_listen, bounded, emit, open_store, payment_provider
from consumers.cli.extras import require
from consumers.http.site import webhook_path
from ledger.providers.base import PaymentConfigError, SandboxProvider, secret_env

if TYPE_CHECKING:
    from ledger.store.database import Store

default_listen = "127.0.0.1:8081"


# The provider's amount, as `simulate` sends it: any integer of up to 60 digits, so the webhook
# door's own refusal of one past 2^53-1 can be played (a number that is none is still a usage error).
provider_amount = bounded(int, -(10**60), 10**60)
provider_amount.__name__ = "provider_amount"


def register(sub: argparse._SubParsersAction) -> None:
    payments = sub.add_parser("payments", help="the payment provider's door").add_subparsers(
        dest="payments_command", required=True)
    s = payments.add_parser("simulate", help="the sandbox provider pays a link: a signed webhook through "
                                             "the same path as a real one; prints its outcome")
    s.add_argument("--reference", required=True, help="the payment link's reference")
    s.add_argument("--amount", required=True, type=provider_amount,
                   help="minor units (kobo, cents); any integer, as a provider could send: past 2^53-1 the ledger refuses it")
    s.add_argument("--id", dest="event_id", help="provider event id (default: a fresh one); "
                                                 "send one twice to see a duplicate")
    s.add_argument("--business", help="default: the business that issued the link")
    add_db(s)
    s.set_defaults(run=simulate)

    w = sub.add_parser("webhook", help=f"serve POST {webhook_path} alone, until SIGINT or SIGTERM")
    add_listen(w, default_listen)
    w.add_argument("--sandbox", action="store_true",
                   help=f"without {secret_env}: verify with the sandbox's public secret (for trials: anyone can "
                        "sign a payment with it)")
    add_db(w)
    w.set_defaults(run=webhook)


def link_business(store: Store, reference: str) -> str | None:
    """The business that issued the link `reference`, read from the log."""
    return next((e.business_id for _, e in store.notifications(types=["PaymentLinkIssued"])
                 if e.reference == reference), None)


def simulate(args: argparse.Namespace) -> int:
    from consumers.runtime import bootstrap  # the ledger: the parser and the command models
    from ledger.ids import time_ordered_id

    provider = payment_provider()
    if not isinstance(provider, SandboxProvider):
        raise UsageError(f"simulate plays the sandbox provider, not {provider.name!r} (LEDGER_PAYMENT_PROVIDER)")
    store = open_store(args)
    business = args.business or link_business(store, args.reference)
    if business is None:
        # A provider cannot be paid on a link it never made; --business sends it anyway.
        raise UsageError(f"no payment link {args.reference!r} in the log; give --business to send it anyway")
    body, headers = provider.charge(event_id=args.event_id or f"sim-{time_ordered_id()}",
                                    business_id=business, reference=args.reference, amount=args.amount)
    emit(bootstrap(store, provider=provider).handle_webhook(body, headers))  # the webhook's own door
    return 0


def webhook(args: argparse.Namespace) -> int:
    require("web")
    from consumers.http.webhook import serve  # aiohttp, which builds its SSL contexts at import
    from consumers.runtime import bootstrap

    provider = payment_provider()
    public_secret = getattr(provider, "uses_default_secret", False)
    if public_secret and not args.sandbox:
        raise UsageError(f"{secret_env} is not set: refusing to take payments without a secret of your own "
                         "(give --sandbox to try the sandbox's public secret)")
    if public_secret:
        print(f"ledger webhook: --sandbox: verifying with the sandbox's public secret, which anyone can sign "
              f"with; set {secret_env} before real money", file=sys.stderr, flush=True)
    runtime = bootstrap(open_store(args), provider=provider, metrics=True)  # no token: the provider signs

    def announce(addresses) -> None:
        for address in addresses:
            host, port = address[:2]
            host = f"[{host}]" if ":" in host else host
            print(f"ledger webhook: listening on http://{host}:{port}{webhook_path}", file=sys.stderr, flush=True)

    try:
        asyncio.run(serve(runtime, args.listen, announce, public_secret_ok=args.sandbox))
    except PaymentConfigError as exc:
        raise UsageError(str(exc)) from exc
    return 0
