"""The simulated deployment: one database, two `serve` processes that take the partitions in
turn, a webhook door, and a broker that is a list per partition.

The ledger runs as the doors run it: `Ledger.handle` with the Kafka door's own statements
(the fenced offsets of consumers/kafka/offsets.py and the outbox rows of outbox.py) in the
batch's transaction, and `Ledger.handle_webhook`. What stands in for Kafka is in memory, and
so is the publisher: after a commit it sends what the batch owes and deletes the row, as
consumers/kafka/publisher.py does. Faults are raised from inside the database driver's path
(an SQLAlchemy hook before any statement), so a "killed" writer stops exactly there.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiokafka import TopicPartition
from aiokafka.structs import ConsumerRecord
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from consumers.kafka import held, offsets, outbox
from consumers.kafka.progress import Progress, read_stored
from consumers.kafka.topics import SOURCE_HEADER, Topics
from ledger import links
from ledger.links import waiting_for
from ledger.service import Handled, Ledger
from ledger.store.database import Store, execute

GROUP = "ledger"
TOPICS = Topics()
PARTITIONS = {"agent": TopicPartition(TOPICS.commands, 0), "owner": TopicPartition(TOPICS.admin, 0)}
DOORS = {tp.topic: door for door, tp in PARTITIONS.items()}

# A writer's snapshot every this many events of a business (5,000 in the product): a run of a
# few thousand steps takes and reads snapshots many times, and a writer that reloads a state
# (started after a kill, or after losing a race to another writer: ~500 reloads a 2,000-step
# seed) folds at most this many events, not the whole stream. At 200 a reload decoded ~95
# events and reloads were a quarter of a seed's CPU; at 25, ~12.
snapshot_every_events = 25


class Killed(BaseException):
    """The process died here: nothing of ours catches it, as nothing catches a kill -9."""


class Faults:
    """Armed by the run: the n-th statement from now raises."""

    def __init__(self, store: Store) -> None:
        self.armed: tuple[str, int] | None = None
        self.injected: dict[str, int] = {}
        event.listen(store.engine, "before_cursor_execute", self._before)

    def arm(self, kind: str, statement: int) -> None:
        self.armed = (kind, statement)

    def _before(self, conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, many: bool) -> None:
        if self.armed is None:
            return
        kind, left = self.armed
        if left > 1:
            self.armed = (kind, left - 1)
            return
        self.armed = None
        self.injected[kind] = self.injected.get(kind, 0) + 1
        if kind == "kill":
            raise Killed(statement[:60])
        raise OperationalError(statement[:60], {}, Exception("the simulated database refused"))


class Clock:
    def __init__(self, rng: random.Random) -> None:
        self.rng, self.micros = rng, 1_790_000_000 * 10**6  # 2026-09

    def now(self) -> str:
        import datetime as dt

        self.micros += self.rng.randint(1, 2000)
        at = dt.datetime.fromtimestamp(self.micros / 10**6, dt.timezone.utc)
        return at.isoformat(timespec="microseconds").replace("+00:00", "Z")

    def jump(self, seconds: int) -> None:
        self.micros = max(0, self.micros + seconds * 10**6)


@dataclass
class Broker:
    """Each partition's messages, in offset order, as (value, the command as sent or None)."""
    logs: dict[TopicPartition, list[tuple[bytes, Any]]] = field(
        default_factory=lambda: {tp: [] for tp in PARTITIONS.values()})
    published: list[outbox.Message] = field(default_factory=list)
    answered: set[tuple[str, int, int]] = field(default_factory=set)  # sources an outcome was published for

    def send(self, door: str, value: bytes, sent: Any) -> None:
        self.logs[PARTITIONS[door]].append((value, sent))

    def publish(self, messages: list[outbox.Message]) -> None:
        for m in messages:
            self.published.append(m)
            if m.target == TOPICS.outcomes:
                source = dict(m.headers).get(SOURCE_HEADER, b"").decode().rsplit("/", 2)
                self.answered.add((source[0], int(source[1]), int(source[2])))


class Serve:
    """One `ledger serve` process: its Ledger (and so its cache) lives as long as it does.

    As consumers/kafka/writer.py does: a batch's first round writes every decision but the
    payment links owed, with the offsets past the whole batch and the held commands' rows
    (consumers/kafka/held.py); the held commands are then answered with the provider's answers
    (the sandbox answers at once) in a write of their own, fenced on the stored offset. A kill
    between the two leaves the rows, which the next holder answers before it consumes."""

    def __init__(self, store: Store, broker: Broker, clock: Clock, new_id: Callable[[], str]) -> None:
        self.store, self.broker = store, broker
        self.ledger = Ledger(store, now=clock.now, new_id=new_id)
        self.ledger.states.snapshot_every = snapshot_every_events
        self.progress = Progress()
        self.owed: list[outbox.Owed] = []
        self.forget_first = False  # the planted bug `outbox_deleted`
        self.ahead: list[tuple[str, list[ConsumerRecord], list, Handled]] = []  # held, not answered yet
        self.recovering: list[ConsumerRecord] = []  # held by an earlier holder, to answer first
        self.in_hand: list[tuple[str, ConsumerRecord]] = []  # what the write in progress decides

    def assign(self) -> None:
        """Take the partitions as the database says (a rebalance, or a start): publish what a
        crashed holder owed, answer what it held, then go on from the stored offsets."""
        stored = read_stored(self.store.engine, GROUP, PARTITIONS.values())
        self.progress = Progress()
        self.progress.assign(stored, PARTITIONS.values())
        self.owed = list(stored.owed)
        self.ahead = []
        self.recovering = held.pending(self.store.engine, GROUP, PARTITIONS.values())

    def next_records(self, door: str, batch: int) -> list[ConsumerRecord]:
        return self._records(PARTITIONS[door], batch)

    def apply(self, door: str, records: list[ConsumerRecord]) -> list[tuple[str, ConsumerRecord, dict]]:
        """What was held answered, then these records of a door decided and written with their
        offsets, outbox rows and held rows, then their held ones answered: (door, record,
        outcome) in the order decided."""
        self.in_hand = [(DOORS[r.topic], r) for r in self.recovering]
        self.in_hand += [(d, rs[h.at]) for d, rs, _, first in self.ahead for h in first.holds]
        self.in_hand += [(door, r) for r in records]
        decided = self._recover() + self._settle()
        if records:
            decided += self._first(door, records)
            decided += self._settle()
        return decided

    def _first(self, door: str, records: list[ConsumerRecord]) -> list[tuple[str, ConsumerRecord, dict]]:
        tp = PARTITIONS[door]
        seen = self.progress.applied([tp]).get(tp)

        def statements(outcomes: list[dict], encoded: list[bytes]) -> tuple[list, list[outbox.Owed]]:
            answered = [(r, o, e) for r, o, e in zip(records, outcomes, encoded) if o is not None]
            waiting = [r for r, o in zip(records, outcomes) if o is None]
            owed = outbox.owed(TOPICS, [a[0] for a in answered], [a[1] for a in answered], [a[2] for a in answered])
            return [offsets.advance(GROUP, seen, records[-1]), *outbox.insert(GROUP, owed),
                    *held.insert(GROUP, waiting)], owed

        raws = [r.value for r in records]
        waiting = waiting_for(h for *_, first in self.ahead for h in first.holds)
        handled = self.ledger.ahead(self.ledger.read(raws, door), raws, waiting, statements)
        self.progress.moved({tp: records[-1].offset})
        self.owed.extend(handled.extra)
        if handled.holds:
            self.ahead.append((door, records, raws, handled))
        return [(door, r, out) for r, out in zip(records, handled.outcomes) if out is not None]

    def _settle(self) -> list[tuple[str, ConsumerRecord, dict]]:
        decided = []
        while self.ahead:
            door, records, raws, first = self.ahead[0]
            present = {r.offset for r in held.pending(self.store.engine, GROUP, [PARTITIONS[door]])}
            holds = [h for h in first.holds if records[h.at].offset in present]  # others answered by another holder
            if holds:
                mine = [records[h.at] for h in holds]
                made = links.ask(self.ledger.provider, holds)
                handled = self.ledger.settle([h.item for h in holds], [raws[h.at] for h in holds], made,
                                             self._answering(mine))
                self.owed.extend(handled.extra)
                decided += [(door, r, out) for r, out in zip(mine, handled.outcomes)]
            self.ahead.pop(0)
        return decided

    def _recover(self) -> list[tuple[str, ConsumerRecord, dict]]:
        decided = []
        for door in ("owner", "agent"):
            records = [r for r in self.recovering if DOORS[r.topic] == door]
            if records:
                handled = self.ledger.handle([r.value for r in records], door, self._answering(records))
                self.owed.extend(handled.extra)
                decided += [(door, r, out) for r, out in zip(records, handled.outcomes)]
                self.recovering = [r for r in self.recovering if DOORS[r.topic] != door]
        return decided

    def _answering(self, records: list[ConsumerRecord]) -> Callable[[list[dict], list[bytes]], tuple[list, list]]:
        """The statements of a write that answers held records (consumers/kafka/writer.py's)."""
        seen = self.progress.applied({TopicPartition(r.topic, r.partition) for r in records})

        def statements(outcomes: list[dict], encoded: list[bytes]) -> tuple[list, list[outbox.Owed]]:
            owed = outbox.owed(TOPICS, records, outcomes, encoded)
            return [*(offsets.still(GROUP, tp, at) for tp, at in seen.items() if at is not None),
                    *outbox.insert(GROUP, owed), *held.forget(GROUP, records)], owed
        return statements

    def publish(self, crash_between: bool = False) -> None:
        """Send what is owed, then delete its rows (the planted bug: the other way round)."""
        owed, self.owed = self.owed, []
        if not owed:
            return
        if self.forget_first:
            self._forget(owed)
            if crash_between:
                raise Killed("between the outbox delete and the publish")
            self.broker.publish([m for o in owed for m in o.messages])
            return
        self.broker.publish([m for o in owed for m in o.messages])
        if crash_between:
            raise Killed("between the publish and the outbox delete")
        self._forget(owed)

    def _forget(self, owed: list[outbox.Owed]) -> None:
        rows: dict[TopicPartition, list[int]] = {}
        for o in owed:
            rows.setdefault(o.tp, []).append(o.offset)
        with self.store.engine.begin() as conn:
            for statement in outbox.forget_rows(GROUP, rows):
                execute(conn, statement)

    def resync(self) -> None:
        """After a failed write: what the database holds is the truth (another process may have
        applied these records, and held some for the provider: they are answered here next, as
        consumers/kafka/writer.py's resync does)."""
        stored = read_stored(self.store.engine, GROUP, PARTITIONS.values())
        self.progress.resync(stored, PARTITIONS.values())
        known = {(r.topic, r.offset) for _, rs, _, first in self.ahead for r in (rs[h.at] for h in first.holds)}
        known |= {(r.topic, r.offset) for r in self.recovering}
        self.recovering += [r for r in held.pending(self.store.engine, GROUP, PARTITIONS.values())
                            if (r.topic, r.offset) not in known]

    def _records(self, tp: TopicPartition, batch: int) -> list[ConsumerRecord]:
        log = self.broker.logs[tp]
        applied = self.progress.applied([tp]).get(tp)
        start = 0 if applied is None else applied + 1
        found = [ConsumerRecord(tp.topic, tp.partition, offset, 0, 0, None, log[offset][0], None, 0,
                                len(log[offset][0]), ())
                 for offset in range(start, min(len(log), start + batch))]
        return self.progress.unapplied(tp, found)
