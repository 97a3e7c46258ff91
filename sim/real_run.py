"""`python -m sim --real`: the seed's actions against real processes (sim/real_cluster.py),
checked from outside with the in-process mode's model and checks.

The actions and the faults come from the seed; the interleaving does not (two `ledger serve`
processes, a broker and a database run on their own clocks), so a failing seed replays its
action list, not its timing. Sends go to the broker as they come; the run settles (every
command sent has its outcome on the outcomes topic, within `settle_s_max`) at an `apply`, before
a payment or an analyst's read, and at the end, and checks every invariant there. The model is
fed the outcomes in the order the ledger decided them, which is the log's order: each
decision is matched to the outcome of the same business and command id, in offset order.

Faults are real: SIGKILL of a serve at once (`kill`) or just after a send, while it is in hand
(`crash_publish`); SIGTERM, which must end in exit 0 (`db_error`: the database cannot be
made to refuse a statement of another process); a serve stopped and, at the next
`rebalance`, started again (`rebalance`); a record produced twice (`duplicate`) or late
(`lose`). Each process killed or stopped is started again. The clock of a real process
cannot be moved: `clock_jump` is left out (counted as such).
"""
from __future__ import annotations

import random
import shutil
import tempfile
import time
import traceback
from collections import Counter, defaultdict, deque
from pathlib import Path
from typing import Any

import orjson

from ledger.core import events as ev
from ledger.providers.base import SandboxProvider
from sim import actors, commands
from sim.actors import Action
from sim.checks import Checks, Violation
from sim.cluster import TOPICS
from sim.model import Model
from sim.real_cluster import SECRET, Deployment, Source
from sim.run import Paying, Result

settle_s_max = 90.0  # a kill costs the group's session timeout and a rebalance or two
poll_ms = 100
log_tail_chars = 1500

# Events that are no command's decision: the link shells around one, and the webhook door's,
# whose outcomes the run has from the door itself.
_NOT_DECISIONS = (ev.PaymentLinkRequested, ev.PaymentLinkFailed, ev.PaymentReceived, ev.WebhookRefused)
_UNCLAIMING = ("not_permitted", "command_id_reused")
_PAYMENTS = ("pay", "pay_again", "pay_reused", "pay_unknown")


class Wire:
    """What `commands.Sent` sends to: the real broker, each record remembered by its source."""

    def __init__(self, run: "RealRun") -> None:
        self.run = run
        self.answered: set[Source] = set()  # sources with an outcome on the topic (what Checks reads)

    def send(self, door: str, value: bytes, sent: Any) -> None:
        command = sent["command"]
        key = command.get("business_id") if isinstance(command, dict) else None
        topic = TOPICS.commands if door == "agent" else TOPICS.admin
        source = self.run.deployment.kafka.send(topic, key.encode() if isinstance(key, str) else None, value)
        self.run.entries[source] = (door, sent)
        self.run.unfed.append(source)


class RealRun(Paying):
    def __init__(self, seed: int, deployment: Deployment) -> None:
        self.deployment, self.store = deployment, deployment.store
        self.rng = random.Random(seed ^ 0x5EED)  # what is sent, as in-process
        self.fault_rng = random.Random(seed ^ 0xFA17)  # which process a fault hits
        self.model = Model()
        self.checks = Checks(self.store, self.model)
        self.sent = commands.Sent(self.rng)
        self.wire = Wire(self)
        self.provider = SandboxProvider(SECRET)
        self.pending: dict[str, Action] = {}
        self.injected: Counter[str] = Counter()
        self.entries: dict[Source, tuple[str, dict]] = {}
        self.unfed: list[Source] = []  # sent, not yet fed to the model
        self.outcomes: dict[Source, list[bytes]] = defaultdict(list)
        self.claimed: set[tuple[Any, Any]] = set()  # (business, command id) that took effect
        self.cursor = 0  # the log read so far for the order of decisions
        self.down: int | None = None  # the serve a rebalance stopped

    def fail(self, invariant: str, detail: str) -> None:
        self.checks.fail(invariant, detail)

    # --- steps ------------------------------------------------------------------

    def step(self, n: int, action: Action) -> None:
        self.checks.begin(n, action)
        try:
            handler = getattr(self, "_" + action.name, None)
            if action.name == "apply" or action.name == "analyse" or action.name in _PAYMENTS:
                self.settle()
            if handler is not None:
                handler(action)
            elif action.is_fault:
                self.pending[action.name] = action
            else:
                self.sent.send(self.wire, self.model, action, self.pending)
                if self.pending.pop("crash_publish", None) is not None:
                    self._killed(self._target(), "sigkill_in_flight")
        except Violation:
            raise
        except Exception as exc:
            raise Violation(n, "every input answered, no door raises",
                            "".join(traceback.format_exception(exc))[-log_tail_chars:], action) from exc

    def finish(self, step: int) -> None:
        """The end: every serve up, everything sent answered, the whole log checked."""
        self.checks.begin(step, None)
        self.pending.clear()
        if self.down is not None:
            self._rebalance(None)
        self.settle()
        self.checks.at_end(self.wire, None)

    def _apply(self, action: Action) -> None:
        pass  # the serves apply on their own: the step settled

    def _analyse(self, action: Action) -> None:
        self.checks.analyse(action.arg("what"))

    # --- faults -------------------------------------------------------------------

    def _target(self) -> int:
        """The serve a fault hits: the seed's choice, or the one that is up while a rebalance has the other down."""
        n = self.fault_rng.randrange(2)
        return 1 - n if n == self.down else n

    def _kill(self, action: Action) -> None:
        self._killed(self._target(), "sigkill")

    def _killed(self, n: int, kind: str) -> None:
        serve = self.deployment.serves[n]
        serve.kill()
        serve.start()
        self.injected[kind] += 1

    def _db_error(self, action: Action) -> None:
        n = self._target()
        serve = self.deployment.serves[n]
        status = serve.stop()
        if status != 0:
            self.fail("SIGTERM: the batch in hand finished, exit 0", f"serve{n} exited {status}: {self._tail(n)}")
        serve.start()
        self.injected["sigterm"] += 1

    def _rebalance(self, action: Action | None) -> None:
        """Stop one serve (its partitions go to the other); the next rebalance starts it again."""
        if self.down is None:
            self.down = self.fault_rng.randrange(2)
            status = self.deployment.serves[self.down].stop()
            if status != 0:
                self.fail("SIGTERM: the batch in hand finished, exit 0", f"serve{self.down} exited {status}")
        else:
            self.deployment.serves[self.down].start()
            self.down = None
        self.injected["rebalance"] += 1

    def _clock_jump(self, action: Action) -> None:
        self.injected["clock_jump_left_out"] += 1

    # --- the provider ---------------------------------------------------------------

    def _webhook_call(self, event_id: str, business_id: str, reference: str, amount: int) -> None:
        """A signed webhook to the HTTP door, while every serve is idle: it is decided between
        the commands sent before and after it."""
        body, headers = self.provider.charge(event_id=event_id, business_id=business_id, reference=reference,
                                             amount=amount)
        expected = self.model.expect_payment(event_id, business_id, reference, amount, body)
        status, out = self.deployment.post_webhook(body, headers)
        self.sent.payments.append((event_id, business_id, reference, amount))
        if status != 200:
            self.fail("every input answered, no door raises", f"the webhook door answered {status}: {out}")
        self.checks.paid(expected, (event_id, business_id, reference, amount, body), out)
        self.checks.after_step(self.wire, None)

    # --- settling ---------------------------------------------------------------------

    def settle(self) -> None:
        """Wait until every command sent has its outcome; feed the model in the log's order; check."""
        self._await_outcomes()
        self._feed()
        self.checks.after_step(self.wire, None)

    def _await_outcomes(self) -> None:
        deadline = time.monotonic() + settle_s_max
        while True:
            for source, value in self.deployment.kafka.outcomes(poll_ms):
                self.outcomes[source].append(value)
                self.wire.answered.add(source)
            missing = [s for s in self.unfed if s not in self.outcomes]
            for n, serve in enumerate(self.deployment.serves):
                if n != self.down and not serve.up:
                    self.fail("no door dies", f"serve{n} exited {serve.proc.returncode}: {self._tail(n)}")
            if not missing:
                return
            if time.monotonic() > deadline:
                self.fail("every command exactly one outcome",
                          f"{len(missing)} sent without an outcome after {settle_s_max:g} s: {missing[:5]}")

    def _feed(self) -> None:
        """Each decision the log gained, in its order, with the outcome that announced it; then
        the outcomes that announced none (duplicates)."""
        arrived, self.unfed = self.unfed, []
        answers = {s: self._one_outcome(s) for s in arrived}
        queues: dict[tuple[Any, Any], deque[Source]] = defaultdict(deque)
        rest = []
        for s in arrived:  # in the order sent: per partition, the order of offsets
            out = answers[s]
            if out["events"] and not out.get("duplicate"):
                queues[(out.get("business_id"), out.get("command_id"))].append(s)
            else:
                rest.append(s)
        for key, types in self._decisions():
            if not queues.get(key):
                self.fail("no event the model did not expect", f"{types} of {key}: no command sent is answered so")
            s = queues[key].popleft()
            if answers[s]["events"] != types:
                self.fail("the log agrees with the outcomes", f"{s}: outcome {answers[s]['events']}, log {types}")
            self._decided(s, answers[s])
        left = [s for q in queues.values() for s in q]
        if left:
            self.fail("the log agrees with the outcomes", f"outcomes whose events the log lacks: {left[:5]}")
        for s in rest:
            self._decided(s, answers[s])

    def _one_outcome(self, source: Source) -> dict:
        """A source's outcome: published once, or again after a crash byte for byte (docs/kafka.md)."""
        copies = self.outcomes[source]
        if len(set(copies)) > 1:
            self.fail("every command exactly one outcome", f"{source} answered {len(set(copies))} ways: {copies[:2]}")
        self.injected["outcome_published_again"] += len(copies) - 1
        return orjson.loads(copies[0])

    def _decisions(self) -> list[tuple[tuple[Any, Any], list[str]]]:
        """The log's decisions since the last read: (business, command id) and the event types,
        a decision starting at a claim, a rejection, or another command's event."""
        found: list[tuple[tuple[Any, Any], list[str]]] = []
        for position, e in self.store.notifications(self.cursor + 1):
            self.cursor = position
            if isinstance(e, _NOT_DECISIONS):
                continue
            key = (e.business_id, e.command_id)
            if not found or e.claimed is not None or isinstance(e, ev.CommandRejected) or found[-1][0] != key:
                found.append((key, [e.type]))
            else:
                found[-1][1].append(e.type)
        return found

    def _decided(self, source: Source, out: dict) -> None:
        key = (out.get("business_id"), out.get("command_id"))
        if not out.get("duplicate") and out["status"] != "rejected" and out["reason"] not in _UNCLAIMING:
            if key in self.claimed:
                self.fail("every command exactly one effect", f"{key} took effect again at {source}: {out}")
            self.claimed.add(key)
        door, entry = self.entries[source]
        self.checks.decided(door, entry, out, source[2])

    def _tail(self, n: int) -> str:
        return self.deployment.serves[n].log.read_text(errors="replace")[-log_tail_chars:]


def run_real(seed: int, actions: list[Action], db: str | None = None) -> Result:
    """One seed's actions against a deployment of its own; the folder (logs, SQLite) is kept on failure."""
    folder = Path(tempfile.mkdtemp(prefix=f"sim-real-{seed}-"))
    deployment = Deployment(folder, db)
    violation = None
    try:
        run = RealRun(seed, deployment)
        try:
            for n, action in enumerate(actions):
                run.step(n, action)
            run.finish(len(actions))
        except Violation as found:
            violation = Violation(found.step, found.invariant, f"{found.detail} (logs: {folder})", found.action)
    finally:
        deployment.close()
    if violation is None:
        shutil.rmtree(folder, ignore_errors=True)
    faults = {**run.injected, **run.sent.faults}
    return Result(seed, len(actions), violation, {k: v for k, v in faults.items() if v}, "")


def run_real_seed(seed_steps_db: tuple[int, int, str | None]) -> Result:
    """`run_real` of a seed's own script (one argument: what a process pool maps)."""
    seed, steps, db = seed_steps_db
    result = run_real(seed, actors.script(seed, steps).actions, db)
    if result.violation is not None:
        result.violation.action = None
    return result
