"""`ledger serve` and `ledger submit`: the Kafka doors."""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING

from consumers.cli.common import UsageError, add_db, bounded, emit, int32_max, open_input, open_runtime, week_s
from consumers.cli.extras import require
from consumers.http.site import parse_listen
from consumers.kafka.topics import (Topics, TopicsError, bootstrap_servers, default_group, default_timeout_s, ensure_topics,
                              fetch_wait_ms_default, partitions_default)
from ledger.retry import retrying_async

if TYPE_CHECKING:
    from consumers.kafka.consumer import Server
    from consumers.runtime import Runtime

log = logging.getLogger("ledger.kafka")
stop_grace_s = 30.0  # after SIGTERM, the batch in hand has this long to finish
_TOPIC_OPTIONS = {"commands": "agent door", "admin": "owner door", "outcomes": "every outcome",
                  "events": "every appended event", "dlq": "messages that could not be read",
                  "escalations": "escalations raised, acknowledged, closed"}


def register(sub: argparse._SubParsersAction) -> None:
    s = sub.add_parser("serve", help="run the Kafka consumers: commands in, outcomes and events out")
    add_db(s)
    _add_kafka(s)
    s.add_argument("--group", default=default_group, help=f"consumer group (default {default_group})")
    s.add_argument("--create-topics", action="store_true", help="create missing topics first")
    s.add_argument("--partitions", type=bounded(int, 1, 100_000), default=partitions_default,
                   help=f"partitions of each topic --create-topics makes (default {partitions_default})")
    s.add_argument("--replication-factor", type=bounded(int, 1, 32_767), default=1, help="for --create-topics (default 1)")
    s.add_argument("--session-timeout-ms", type=bounded(int, 1, int32_max), default=10_000,
                   help="how soon the group notices a dead consumer (default 10000)")
    s.add_argument("--fetch-wait-ms", type=bounded(int, 1, int32_max), default=fetch_wait_ms_default,
                   help="how long the broker may hold a poll with nothing new (default "
                        f"{fetch_wait_ms_default}, for a broker that holds it even when records come; "
                        "Apache Kafka answers as soon as one does: give it 100 or more)")
    s.add_argument("--webhook", metavar="HOST:PORT", help="also serve the payment webhook (POST /webhooks/payments)")
    s.add_argument("--metrics", metavar="HOST:PORT", help="serve GET /healthz and GET /metrics (Prometheus) there")
    s.add_argument("--open-agent-door", action="store_true",
                   help="take agent commands without checking their ledger-token header: local trials only")
    s.add_argument("--open-owner-door", action="store_true",
                   help="take owner commands (ledger.admin) without checking their ledger-token header: "
                        "anyone who reaches the broker owns every business; local trials only")
    s.set_defaults(run=serve)

    t = sub.add_parser("submit", help="produce commands to the agent topic, print their outcomes in input order")
    t.add_argument("file", nargs="?", default="-", metavar="FILE|-")
    t.add_argument("--admin", action="store_true", help="to the owner door's topic")
    t.add_argument("--timeout", type=bounded(float, 0, week_s), default=default_timeout_s, metavar="SECONDS",
                   help=f"how long to wait for outcomes after the last command is sent (default {default_timeout_s:g})")
    t.add_argument("--token", help="the token sent in the ledger-token header: the agent's (else $LEDGER_AGENT_TOKEN), "
                                   "or with --admin the owner's (`ledger owners add`; else $LEDGER_OWNER_TOKEN)")
    _add_kafka(t)
    t.set_defaults(run=submit)


def _add_kafka(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bootstrap-servers", metavar="HOST:PORT",
                   help="Kafka (else $LEDGER_KAFKA_BOOTSTRAP, else localhost:9092)")
    for name, what in _TOPIC_OPTIONS.items():
        p.add_argument(f"--{name}-topic", metavar="NAME", default=getattr(Topics(), name),
                       help=f"{what} (default %(default)s)")


def _topics(args: argparse.Namespace) -> Topics:
    return Topics(**{name: getattr(args, f"{name}_topic") for name in _TOPIC_OPTIONS})


# --- serve --------------------------------------------------------------------

def serve(args: argparse.Namespace) -> int:
    if args.partitions < 1 or args.replication_factor < 1 or args.session_timeout_ms < 1 or args.fetch_wait_ms < 1:
        raise UsageError("--partitions, --replication-factor, --session-timeout-ms and --fetch-wait-ms must be positive")
    require("kafka", *(["web"] if args.webhook or args.metrics else []))  # the HTTP listeners only when asked for
    for option in ("webhook", "metrics"):
        try:
            if getattr(args, option):
                parse_listen(getattr(args, option))
        except ValueError as exc:
            raise UsageError(f"--{option}: {exc}") from exc
    if not os.environ.get("LEDGER_LOG_LEVEL"):
        log.setLevel(logging.INFO)  # an operator wants to see assignments, retries and progress
    for door, option in (("agent", args.open_agent_door), ("owner", args.open_owner_door)):
        if option:
            print(f"ledger: WARNING: --open-{door}-door: {door} commands are taken WITHOUT checking their token;"
                  " anyone who can produce to the topic can act for any business. For local trials only.",
                  file=sys.stderr, flush=True)
    return asyncio.run(_serve(args))


async def _serve(args: argparse.Namespace) -> int:
    stop = _stop_on_signals()
    # Loaded once a stop can be heard, and only by the subcommand that uses them.
    from consumers.kafka.consumer import ServeConfig, Server

    bootstrap, topics = bootstrap_servers(args.bootstrap_servers), _topics(args)
    # Each start-up step said as it begins: a start that hangs names the step it hangs in.
    log.info("opening the database")
    runtime = await retrying_async(lambda: asyncio.to_thread(_runtime, args, bootstrap, topics), stop,
                                   "opening the database")
    if runtime is None:
        return _stopped("stopped before the database could be opened")
    log.info("checking the topics on %s", bootstrap)
    if not await _topics_ready(args, bootstrap, topics, stop):
        return _stopped(f"stopped before the topics on {bootstrap} could be checked")
    server = Server(runtime, ServeConfig(bootstrap=bootstrap, group=args.group, topics=topics,
                                         session_timeout_ms=args.session_timeout_ms, fetch_wait_ms=args.fetch_wait_ms))
    runners: list = []
    try:
        await _start_http(args, runtime, server, runners)
        await server.run(stop)
    finally:
        for runner in runners:
            await runner.cleanup()
    return _stopped(server.unfinished) if server.unfinished else 0


def _runtime(args: argparse.Namespace, bootstrap: str, topics: Topics) -> Runtime:
    """serve's runtime: both doors' tokens checked unless opened for a trial, the collector
    run by hand once started, the projections and the event relay in a child."""
    from consumers.kafka.relaying import RelayTo
    from consumers.runtime import Collector, Follow

    checked = [door for door, opened in (("agent", args.open_agent_door), ("owner", args.open_owner_door))
               if not opened]
    return open_runtime(args, checked=checked, collector=Collector.by_hand, follow=Follow.child,
                        relay_to=RelayTo(bootstrap, topics), metrics=bool(args.metrics or args.webhook))


def _stop_on_signals() -> asyncio.Event:
    """Set on SIGTERM or SIGINT; the batch in hand then has stop_grace_s to finish."""
    stop, loop = asyncio.Event(), asyncio.get_running_loop()

    def on_signal(name: str) -> None:
        if stop.is_set():
            return
        log.info("%s: finishing the batch in hand", name)
        stop.set()
        loop.call_later(stop_grace_s, _give_up)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal, sig.name)
    return stop


async def _topics_ready(args: argparse.Namespace, bootstrap: str, topics: Topics, stop: asyncio.Event) -> bool:
    """The topics exist (made with --create-topics); False if the stop came first. The broker's
    errors are its own classes: any failure but the topics' is the broker's way, tried again."""
    try:
        partitions = await retrying_async(
            lambda: ensure_topics(bootstrap, topics.names(), args.create_topics, args.partitions,
                                  args.replication_factor),
            stop, "checking topics", should_retry=lambda exc: not isinstance(exc, TopicsError))
    except TopicsError as exc:
        raise UsageError(str(exc)) from exc
    return partitions is not None


async def _start_http(args: argparse.Namespace, runtime: Runtime, server: Server, runners: list) -> None:
    """The payment webhook and the health and metrics endpoints, if asked for, onto `runners`
    (their modules loaded only then: they need the web extra)."""
    if args.webhook:
        from consumers.http import webhook
        runners.append(await webhook.start(runtime, args.webhook))
        log.info("payment webhook on http://%s:%s%s", *runners[-1].addresses[0][:2], webhook.webhook_path)
    if args.metrics:
        from consumers.kafka.serve_consumer import DoorTables, ServeConsumer
        from consumers.http import ops as ops_http
        runners.append(await ops_http.start(runtime.store, args.metrics, ServeConsumer(server),
                                            extra=[DoorTables(runtime.store)]))
        log.info("health and metrics on http://%s:%s/healthz and /metrics", *runners[-1].addresses[0][:2])


def _stopped(why: str) -> int:
    """A stop that left work undone (the database or Kafka away): exit 1, with the reason."""
    print(f"ledger: operational failure: {why}; what was not committed is applied on the next start",
          file=sys.stderr, flush=True)
    return 1


def _give_up() -> None:
    # The batch in hand is not committed, so nothing is half applied: the next start redoes it.
    print(f"ledger: operational failure: could not finish the batch in hand within {stop_grace_s:g}s",
          file=sys.stderr, flush=True)
    os._exit(1)


# --- submit -------------------------------------------------------------------

def submit(args: argparse.Namespace) -> int:
    require("kafka")
    from aiokafka.errors import KafkaError

    if args.timeout < 0:
        raise UsageError("--timeout must not be negative")
    stream = open_input(args.file)
    lines = [(n, line.rstrip(b"\r")) for n, line in enumerate(stream.read().split(b"\n"), 1) if line.strip()]
    try:
        return asyncio.run(_submit(args, lines))
    except (KafkaError, RuntimeError) as exc:
        print(f"ledger: operational failure: {exc}", file=sys.stderr)
        return 1


async def _submit(args: argparse.Namespace, lines: list[tuple[int, bytes]]) -> int:
    from consumers.agent.client import LedgerClient

    token = args.token or os.environ.get("LEDGER_OWNER_TOKEN" if args.admin else "LEDGER_AGENT_TOKEN")
    tokens = {"owner_token" if args.admin else "token": token}
    async with LedgerClient(args.bootstrap_servers, _topics(args), **tokens) as client:
        futures = [await client.send(raw, admin=args.admin) for _, raw in lines]
        loop = asyncio.get_running_loop()
        deadline = loop.time() + args.timeout
        missing = []
        for (number, _), future in zip(lines, futures):
            try:
                emit(await asyncio.wait_for(future, max(0.0, deadline - loop.time())))
            except TimeoutError:
                missing.append(number)
        sys.stdout.flush()
    if missing:
        shown = ", ".join(map(str, missing[:20])) + (", ..." if len(missing) > 20 else "")
        print(f"ledger: no outcome within {args.timeout:g}s for {len(missing)} of {len(lines)} commands "
              f"(lines {shown})", file=sys.stderr)
        return 1
    return 0
