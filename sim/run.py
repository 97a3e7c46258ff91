"""One seeded run: the script's actions carried out against the real ledger, the reference
model fed every outcome in the order the ledger decided it, every invariant checked after
every step. The first broken one ends the run as a `Violation`.
"""
from __future__ import annotations

import atexit
import gc
import hashlib
import random
import shutil
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eventsourcing.persistence import IntegrityError, OperationalError as StoreOperationalError
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from ledger.providers.base import SandboxProvider
from ledger.service import Ledger
from ledger.store.database import Store
from projections.projector import Projector
from sim import actors, commands
from sim.actors import Action
from sim.checks import Checks, Violation
from sim.cluster import Broker, Clock, Faults, Killed, Serve, snapshot_every_events
from sim.model import Model

__all__ = ["Result", "Violation", "run"]

_REFUSED = (OperationalError, StoreOperationalError)


@dataclass
class Result:
    seed: int
    steps: int
    violation: Violation | None = None
    faults: dict[str, int] = field(default_factory=dict)
    trace: str = ""  # a digest of every outcome, step by step: the same seed, the same trace

    @property
    def ok(self) -> bool:
        return self.violation is None


_template: list[Path] = []  # this process's empty database at the schema's head, made once


def _fresh_database(folder: Path) -> Path:
    """An empty database at the schema's head, with the projections' tables: a copy of one
    this process made once (making the schema, Alembic's revisions and all, cost a seed more
    than its first hundred steps). The run still brings it to head and checks its chain."""
    if not _template:
        made = Path(tempfile.mkdtemp(prefix="sim-template-")) / "sim.db"
        store = Store(f"sqlite:///{made}")
        store.create_tables()
        Projector(store)
        store.close()
        atexit.register(shutil.rmtree, made.parent, ignore_errors=True)
        _template.append(made)
    shutil.copyfile(_template[0], folder / "sim.db")
    return folder / "sim.db"


class Paying:
    """The provider's actions, in both modes: each ends in the mode's `_webhook_call`."""
    model: Model
    rng: random.Random
    sent: commands.Sent

    def _webhook_call(self, event_id: str, business_id: str, reference: str, amount: int) -> None:
        raise NotImplementedError

    def _pay(self, action: Action) -> None:
        paid = commands.payment(self.model, action, self.rng)
        if paid is not None:
            self._webhook_call(*paid)

    def _pay_again(self, action: Action) -> None:
        again = self.sent.earlier_payment(action.arg("back"), reused=False)
        if again is not None:
            self._webhook_call(*again)

    def _pay_reused(self, action: Action) -> None:
        again = self.sent.earlier_payment(action.arg("back"), reused=True)
        if again is not None:
            self._webhook_call(*again)

    def _pay_unknown(self, action: Action) -> None:
        business_id = actors.BUSINESSES[action.arg("business")]
        self._webhook_call(f"evt-{self.rng.getrandbits(64):016x}", business_id, "lnk-nowhere", 100)


class Run(Paying):
    def __init__(self, seed: int, folder: Path, plant: str | None = None) -> None:
        self.rng = random.Random(seed ^ 0x5EED)
        self.store = Store(f"sqlite:///{_fresh_database(folder)}")
        # No fsync: a simulated crash is the process's, never the machine's, so what a commit
        # wrote is there either way; waiting for the disk would only slow every step.
        event.listen(self.store.engine, "connect", lambda conn, _: conn.execute("PRAGMA synchronous=OFF"))
        self.store.create_tables()
        self.faults = Faults(self.store)
        self.clock = Clock(self.rng)
        self.broker, self.model = Broker(), Model()
        self.serves = [self._serve(), self._serve()]
        self.active = 0
        self.serves[0].assign()
        self.provider = SandboxProvider("sim-secret-" + "x" * 32)
        self.webhook = self._webhook_door()
        self.sent = commands.Sent(self.rng)
        self.checks = Checks(self.store, self.model)
        self.pending: dict[str, Action] = {}  # faults waiting for the next door action
        self.plant = plant
        self.digest = hashlib.sha256()

    def _ids(self) -> str:
        return f"{self.rng.getrandbits(64):016x}"

    def _serve(self) -> Serve:
        serve = Serve(self.store, self.broker, self.clock, self._ids)
        serve.forget_first = getattr(self, "plant", None) == "outbox_deleted"
        return serve

    def _webhook_door(self) -> Ledger:
        ledger = Ledger(self.store, provider=self.provider, now=self.clock.now, new_id=self._ids)
        ledger.states.snapshot_every = snapshot_every_events
        return ledger

    # --- steps ------------------------------------------------------------------

    def step(self, n: int, action: Action) -> None:
        self.checks.begin(n, action)
        handler = getattr(self, "_" + action.name, None)
        try:
            if handler is not None:
                handler(action)
            elif action.is_fault:
                self.pending[action.name] = action
            else:
                self.sent.send(self.broker, self.model, action, self.pending)
        except Violation:
            raise
        except Exception as exc:  # a door that raises where it should answer: a finding, not a crash of the run
            raise Violation(n, "every input answered, no door raises",
                            "".join(traceback.format_exception(exc))[-1500:], action) from exc
        self.checks.after_step(self.broker, self.serves[self.active], wrote=handler is not None)

    def drain(self, step: int) -> None:
        """The run's end: no more faults; the holder applies whatever is left."""
        self.pending.clear()
        serve = self.serves[self.active]
        serve.publish()
        for door in ("owner", "agent"):
            while True:
                self.checks.begin(step, None)
                before = serve.progress.applied().get(self._tp(door))
                self._apply_on(serve, door, 50)
                self.checks.after_step(self.broker, serve)
                if serve.progress.applied().get(self._tp(door)) == before:
                    break

    def _apply(self, action: Action) -> None:
        self._apply_on(self.serves[self.active], action.arg("door"), action.arg("batch"))

    def _apply_on(self, serve: Serve, door: str, batch: int) -> None:
        records = serve.next_records(door, batch)
        try:
            with self._armed():
                decided = serve.apply(door, records)
        except Killed:
            self._reconcile(serve.in_hand)
            self._died(serve)
            return
        except (IntegrityError, *_REFUSED):  # fenced by a newer holder, or the database refused
            self._reconcile(serve.in_hand)
            serve.resync()
            return
        for at, record, out in decided:
            self.digest.update(f"{record.offset}:{out['status']}:{out['reason']}".encode())
            self.checks.decided(at, self.broker.logs[self._tp(at)][record.offset][1], out, record.offset)
        try:
            serve.publish(crash_between=self.pending.pop("crash_publish", None) is not None)
        except Killed:
            self._died(serve)

    def _reconcile(self, in_hand: list) -> None:
        """A write killed or refused after one that committed part of what it had in hand (a
        batch's first round before its held links are answered, held commands answered before
        the next batch): those decisions stand, and their outcome comes later as a duplicate;
        the model learns each from the log, in order, as if it had been answered. Two records
        of one command id (the second reusing it with other content) are two decisions in the
        log: each record takes the next of its id, in log order; a record the model knows for a
        delivery again of a decided command takes none (its duplicate writes nothing)."""
        from ledger.evidence import every_decision

        taken: dict[tuple[Any, str], int] = {}  # (business, command id): its decisions taken by earlier records
        for door, record in in_hand:
            sent = self.broker.logs[self._tp(door)][record.offset][1]
            command = sent["command"]
            command_id = command.get("command_id") if isinstance(command, dict) else None
            if not isinstance(command_id, str):
                continue
            if sent.get("malformed"):
                rejected = [e for p, e in self.store.notifications(self.checks.position + 1)
                            if e.type == "CommandRejected" and e.command_id == command_id]
                if rejected:
                    self.checks.decided(door, sent, {"status": "rejected", "reason": "malformed",
                                                     "events": ["CommandRejected"]}, record.offset)
                continue
            business_id = command.get("business_id")
            claim = self.model.claims.get((business_id, command_id))
            if claim is not None and claim[0] == sent["content"]:
                continue  # a delivery again of a decided command: answered a duplicate, nothing in the log
            gained = [d for d in every_decision(self.store, command_id, business_id).get(business_id, [])
                      if any(p > self.checks.position for p, _ in d.events)]
            n = taken.get((business_id, command_id), 0)
            if n >= len(gained):
                continue
            taken[(business_id, command_id)] = n + 1
            if business_id is not None:
                gained[n].currency = self.store.currency_at(business_id, gained[n].events[-1][0])
            self.checks.decided(door, sent, gained[n].record()["outcome"], record.offset)

    def _tp(self, door: str) -> Any:
        from sim.cluster import PARTITIONS

        return PARTITIONS[door]

    def _died(self, serve: Serve) -> None:
        """A process killed: its memory is gone; its replacement starts from the database."""
        index = self.serves.index(serve)
        self.serves[index] = replacement = self._serve()
        if index == self.active:
            replacement.assign()
            replacement.publish()

    def _rebalance(self, action: Action) -> None:
        """The partitions move to the other process; the old holder, not yet told, writes the
        batch it had in hand (a zombie): the fence must keep it from applying anything twice."""
        old = self.serves[self.active]
        self.active = 1 - self.active
        self.serves[self.active].assign()
        self.serves[self.active].publish()
        self._apply_on(old, self.rng.choice(("agent", "owner")), self.rng.randint(1, 4))

    def _clock_jump(self, action: Action) -> None:
        self.clock.jump(action.arg("seconds"))

    def _analyse(self, action: Action) -> None:
        self.checks.analyse(action.arg("what"))

    def _webhook_call(self, event_id: str, business_id: str, reference: str, amount: int) -> None:
        body, headers = self.provider.charge(event_id=event_id, business_id=business_id, reference=reference,
                                             amount=amount)
        expected = self.model.expect_payment(event_id, business_id, reference, amount, body)
        try:
            with self._armed():
                out = self.webhook.handle_webhook(body, headers)
        except Killed:
            self.webhook = self._webhook_door()
            return  # the provider retries later: `pay_again`
        except _REFUSED:
            return
        finally:
            self.sent.payments.append((event_id, business_id, reference, amount))
        self.digest.update(f"pay:{out['status']}:{out['reason']}".encode())
        self.checks.paid(expected, (event_id, business_id, reference, amount, body), out)

    def _armed(self) -> Any:
        """The next fault waiting (a kill or a refusal at its n-th statement), for this door action alone."""
        import contextlib

        fault = self.pending.pop("kill", None) or self.pending.pop("db_error", None)

        @contextlib.contextmanager
        def armed():
            if fault is not None:
                self.faults.arm(fault.name, fault.arg("statement"))
            try:
                yield
            finally:
                self.faults.armed = None
        return armed()


def run(seed: int, actions: list[Action], plant: str | None = None) -> Result:
    folder = Path(tempfile.mkdtemp(prefix=f"sim-{seed}-"))
    try:
        from sim import plants

        with plants.planted(plant):
            sim = Run(seed, folder, plant)
            try:
                for n, action in enumerate(actions):
                    sim.step(n, action)
                sim.drain(len(actions))
                sim.checks.at_end(sim.broker, sim.serves[sim.active])
                violation = None
            except Violation as found:
                violation = found
            sim.store.close()
        faults = {**sim.faults.injected, **{k: v for k, v in sim.sent.faults.items()}}
        return Result(seed, len(actions), violation, faults, sim.digest.hexdigest())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_seed(seed_steps_plant: tuple[int, int, str | None]) -> Result:
    """`run` of a seed's own script (one argument: what a process pool maps)."""
    seed, steps, plant = seed_steps_plant
    if not gc.get_freeze_count():
        # What is alive before the first seed (the modules, their tables and models) is left out
        # of every collection after it: the collector's passes were ~5% of a seed's CPU, ~1% so.
        gc.collect()
        gc.freeze()
    result = run(seed, actors.script(seed, steps).actions, plant)
    if result.violation is not None:
        result.violation.action = None  # travels back from a pool process without it
    return result
