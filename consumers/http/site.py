"""What every HTTP door shares: where to listen, whether that is loopback, and running an
aiohttp app (or `ledger notify`'s loop) until SIGINT or SIGTERM; and the provider door's
path, which the command line names without loading aiohttp."""
from __future__ import annotations

import asyncio
import ipaddress
import signal
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aiohttp import web

webhook_path = "/webhooks/payments"


def parse_listen(value: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:8081` for IPv6) -> (host, port); port 0 picks a free one."""
    host, sep, port = value.rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT, got {value!r}")
    return host, int(port)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a name: it may resolve anywhere


async def start_site(app: web.Application, listen: str) -> web.AppRunner:
    """Serve `app` on `listen` in the running loop; `runner.addresses` holds where.
    The caller awaits `runner.cleanup()`."""
    from aiohttp import web  # here: every subcommand imports this module for parse_listen

    from consumers.http import access_log

    host, port = parse_listen(listen)
    access_log.install()
    runner = web.AppRunner(app, access_log_class=access_log.RedactingAccessLogger)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner


async def serve_until_signalled(runner: web.AppRunner, announce=lambda addresses: None) -> None:
    """Until SIGINT or SIGTERM, then finish the requests in hand and return."""
    stop = stop_on_signals()
    try:
        announce(runner.addresses)
        await stop.wait()
    finally:
        await runner.cleanup()


def stop_on_signals() -> asyncio.Event:
    """An event the running loop sets on SIGINT or SIGTERM: the way a long-running door is asked to stop."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    return stop
