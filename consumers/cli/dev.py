"""`ledger dev broker`: the Kafka-protocol broker the tests use, on localhost, for trying
`ledger serve` and `ledger submit` without Docker (see consumers/kafka/dev_broker.py)."""
from __future__ import annotations

import argparse
import signal
import sys
import time

from consumers.cli.common import add_listen
from consumers.cli.extras import require

default_listen = "127.0.0.1:9092"  # where `ledger serve` and `ledger submit` look by default
poll_s = 0.2  # how often the foreground checks for a signal or a dead broker


def register(sub: argparse._SubParsersAction) -> None:
    dev = sub.add_parser("dev", help="tools for trying the ledger on one machine").add_subparsers(
        dest="dev_command", required=True)
    b = dev.add_parser("broker", help=f"run a Kafka-protocol broker in memory (Tansu) on {default_listen} "
                                      "until SIGINT or SIGTERM; its topics go with it")
    add_listen(b, default_listen)
    b.set_defaults(run=broker)


def broker(args: argparse.Namespace) -> int:
    require("broker")
    from consumers.http.site import parse_listen
    from consumers.kafka import dev_broker

    host, port = parse_listen(args.listen)
    stopped = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.append(True))
    try:
        with dev_broker.running(host, port) as proc:
            print(f"ledger dev broker: Kafka on {host}:{port} (in memory); stop with Ctrl-C", file=sys.stderr,
                  flush=True)
            while not stopped and proc.poll() is None:
                time.sleep(poll_s)
            if not stopped:
                print(f"ledger: operational failure: the broker exited with {proc.returncode}", file=sys.stderr)
                return 1
            return 0
    except RuntimeError as exc:
        print(f"ledger: operational failure: {exc}", file=sys.stderr)
        return 1

