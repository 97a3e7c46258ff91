"""`ledger notify`: each escalation raised or closed, posted to a person's webhook as signed JSON.

What it posts is what the contract puts on `ledger.escalations` "for whoever must notify a
person" (section 10: every escalation raised or closed): `EscalationRaised`, and
`EscalationClosed`, whose `order_id` names the order an owner's approval placed (section 14)
so the person can tell the customer. Acknowledgements are not posted: they change nothing a
person has to act on (docs/contract-choices.md).

It follows the log from a position of its own (one per webhook URL), not Kafka: it needs no
broker and sees escalations from every writer. The body is the event as `ledger events`
prints it and `ledger.escalations` carries it; `X-Ledger-Signature` is the hex HMAC-SHA512
of the raw body, as on the payment webhook. Every attempt is recorded (attempts, last
status, `delivered_at`), raises and closes each in a table of their own; a post answered 2xx
is never made again, and the position never moves past one that was not, so nothing is
skipped either. The one gap is a crash between the 2xx and its record: then the post is
repeated, so receivers should drop repeats by `type` and `escalation_id` (the escalation is
also sent as `X-Ledger-Escalation`).
"""
from __future__ import annotations

import asyncio
import logging
import os
from dataclasses import dataclass
from itertools import islice
from typing import Any

import aiohttp
import orjson
from sqlalchemy import BigInteger, Column, Integer, MetaData, Table, Text, select, update

from ledger.store import sql
from ledger.retry import Backoff, first_line
from ledger.core.events import EscalationClosed, EscalationRaised, event_row
from ledger.providers.base import hmac_sha512_hex, sandbox_secret_default, signature_header
from ledger.service import utc_now
from ledger.store.database import Store

log = logging.getLogger("ledger.notify")

escalation_header = "X-Ledger-Escalation"
page_escalations_max = 500
post_timeout_s = 10.0
retry_first_s = 0.5   # after a failed post, then doubling
retry_max_s = 60.0
error_chars_max = 500
reply_bytes_max = 64 * 1024  # of a receiver's reply read before its connection is let go

metadata = MetaData()
positions = Table(
    "ledger_notify_positions", metadata,
    Column("name", Text, primary_key=True),           # the webhook URL
    Column("position", BigInteger, nullable=False),   # every escalation up to here is delivered
)


def _deliveries(name: str) -> Table:
    return Table(
        name, metadata,
        Column("name", Text, primary_key=True),
        Column("business_id", Text, primary_key=True),
        Column("escalation_id", Text, primary_key=True),
        Column("position", BigInteger, nullable=False),
        Column("attempts", Integer, nullable=False),
        Column("status", Integer),                         # the last HTTP status; null: no answer
        Column("error", Text),                             # why the last attempt failed
        Column("delivered_at", Text),                      # when a 2xx came back; null until then
    )


# One row per webhook and escalation in each: an escalation is raised once and closed once.
deliveries = _deliveries("ledger_notify_deliveries")   # raises
closes = _deliveries("ledger_notify_closes")
_TABLES = {EscalationRaised.__name__: deliveries, EscalationClosed.__name__: closes}
Posted = EscalationRaised | EscalationClosed


def secret_from_env() -> tuple[bytes, bool]:
    """(secret, is the public default): LEDGER_NOTIFY_SECRET, else LEDGER_PAYMENT_SECRET."""
    configured = os.environ.get("LEDGER_NOTIFY_SECRET") or os.environ.get("LEDGER_PAYMENT_SECRET")
    return (configured or sandbox_secret_default).encode(), not configured


@dataclass(frozen=True)
class Delivery:
    position: int
    type: str  # EscalationRaised or EscalationClosed
    business_id: str
    escalation_id: str
    attempts: int
    status: int | None
    delivered_at: str | None


class Undelivered(Exception):
    """An escalation could not be delivered in the attempts allowed (or before a stop)."""


class Notifier:
    def __init__(self, store: Store, webhook: str, secret: bytes, attempts_max: int | None = None,
                 timeout_s: float = post_timeout_s):
        self.store, self.webhook, self.secret = store, webhook, secret
        self.attempts_max = attempts_max  # per escalation and pass; None: until delivered or stopped
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)
        self.lease = sql.lease(store.engine, f"ledger-notify:{webhook}")
        self._warned_lease = False

    async def catch_up(self, session: aiohttp.ClientSession, stop: asyncio.Event,
                       delivered=lambda d: None) -> int:
        """Post every escalation raised or closed since the stored position; how many were delivered.
        Raises Undelivered when one is still not delivered: the next pass starts with it."""
        if not await asyncio.to_thread(self.lease.hold):
            if not self._warned_lease:
                log.warning("another `ledger notify` is posting to %s; waiting for it to stop", self.webhook)
                self._warned_lease = True
            return 0
        upto = await asyncio.to_thread(self.store.max_position)  # committed in position order (see store.py)
        count = 0
        while True:
            start = await asyncio.to_thread(self._position)
            page = await asyncio.to_thread(lambda: list(islice(
                self.store.notifications(start + 1, upto, list(_TABLES)), page_escalations_max)))
            for position, event in page:
                done = await self._deliver(session, position, event, stop)
                if done is not None:
                    delivered(done)
                    count += 1
            if len(page) < page_escalations_max:
                await asyncio.to_thread(self._advance, upto)  # nothing more was raised up to there
                return count

    async def _deliver(self, session: aiohttp.ClientSession, position: int, event: Posted,
                       stop: asyncio.Event) -> Delivery | None:
        """Post until a 2xx; the Delivery, or None when it had been delivered before."""
        if await asyncio.to_thread(self._delivered_before, event):
            await asyncio.to_thread(self._advance, position)
            return None
        body = orjson.dumps(event_row(position, event))
        headers = {"Content-Type": "application/json", signature_header: hmac_sha512_hex(self.secret, body),
                   escalation_header: event.escalation_id}
        backoff, attempt = Backoff(retry_first_s, retry_max_s), 0
        while True:
            attempt += 1
            status, error = await self._post(session, body, headers)
            done = await asyncio.to_thread(self._record, position, event, status, error)
            if done.delivered_at is not None:
                return done
            log.warning("posting %s of %s to %s failed (%s); attempt %d", event.type, event.escalation_id,
                        self.webhook, error, done.attempts)
            if stop.is_set() or (self.attempts_max is not None and attempt >= self.attempts_max):
                raise Undelivered(f"{event.type} of escalation {event.escalation_id} not delivered to {self.webhook} "
                                  f"after {done.attempts} attempts: {error}")
            await backoff.sleep(stop)

    async def _post(self, session: aiohttp.ClientSession, body: bytes,
                    headers: dict[str, str]) -> tuple[int | None, str | None]:
        """(HTTP status, error): a non-2xx answer and no answer at all both fail."""
        try:
            async with session.post(self.webhook, data=body, headers=headers, timeout=self.timeout,
                                    allow_redirects=False) as response:
                await response.content.read(reply_bytes_max)  # only the status counts: a reply is never read whole
                ok = 200 <= response.status < 300
                return response.status, None if ok else f"HTTP {response.status}"
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            return None, (first_line(exc) or type(exc).__name__)[:error_chars_max]

    # --- the tables (one notifier per URL at a time: the lease) -------------------

    def _key(self, event: Posted) -> Any:
        d = _TABLES[event.type].c
        return (d.name == self.webhook) & (d.business_id == (event.business_id or "")) & \
            (d.escalation_id == event.escalation_id)

    def _position(self) -> int:
        with self.store.engine.begin() as conn:
            found = conn.execute(select(positions.c.position).where(positions.c.name == self.webhook)).scalar()
            if found is None:
                conn.execute(positions.insert().values(name=self.webhook, position=0))
            return found or 0

    def _advance(self, position: int, conn: Any = None) -> None:
        statement = (update(positions).where(positions.c.name == self.webhook, positions.c.position < position)
                     .values(position=position))
        if conn is not None:
            conn.execute(statement)
            return
        with self.store.engine.begin() as conn:
            conn.execute(statement)

    def _delivered_before(self, event: Posted) -> bool:
        table = _TABLES[event.type]
        with self.store.engine.connect() as conn:
            return conn.execute(select(table.c.delivered_at).where(self._key(event))).scalar() is not None

    def _record(self, position: int, event: Posted, status: int | None, error: str | None) -> Delivery:
        """One attempt, and on success the position past it, in one transaction."""
        table, delivered_at = _TABLES[event.type], utc_now() if error is None else None
        with self.store.engine.begin() as conn:
            moved = conn.execute(update(table).where(self._key(event)).values(
                attempts=table.c.attempts + 1, status=status, error=error, delivered_at=delivered_at))
            if moved.rowcount == 0:
                conn.execute(table.insert().values(
                    name=self.webhook, business_id=event.business_id or "", escalation_id=event.escalation_id,
                    position=position, attempts=1, status=status, error=error, delivered_at=delivered_at))
            if delivered_at is not None:
                self._advance(position, conn)
            attempts = conn.execute(select(table.c.attempts).where(self._key(event))).scalar_one()
        return Delivery(position, event.type, event.business_id or "", event.escalation_id, attempts, status,
                        delivered_at)


async def run(notifier: Notifier, interval_s: float, stop: asyncio.Event, once: bool,
              delivered=lambda d: None) -> None:
    """Pass after pass until `stop`; with `once`, one pass that raises Undelivered if one is left."""
    backoff = Backoff(retry_first_s, retry_max_s)
    try:
        async with aiohttp.ClientSession() as session:
            while True:
                try:
                    await notifier.catch_up(session, stop, delivered)
                    backoff.reset()
                except Undelivered:
                    if once:
                        raise
                except Exception as exc:  # the database away: the next pass starts from what is stored
                    if once:
                        raise
                    log.warning("notify: %s; retrying", first_line(exc))
                    await backoff.sleep(stop)
                if once or stop.is_set():
                    return
                try:
                    await asyncio.wait_for(stop.wait(), interval_s)
                except TimeoutError:
                    pass
    finally:
        notifier.lease.release()
