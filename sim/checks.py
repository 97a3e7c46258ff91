"""The invariants, checked after every step against the log, the reference model and the
published outcomes. Incremental: each step reads only what the log gained, so a step's
checks cost the same at step 10 and at step 2,000.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from aiokafka import TopicPartition

from consumers.kafka import held, outbox
from consumers.kafka.topics import SOURCE_HEADER
from ledger.store import chain_verify, sql
from ledger.store.chain import GENESIS
from ledger.core import events as ev
from ledger.core.state import BusinessState
from ledger.store.database import Store
from projections.projector import Projector
from sim.actors import Action
from sim.cluster import GROUP, PARTITIONS
from sim.model import Expected, Model
from sim.replaying import Replaying

# The offsets the door stored, read as they are each writing step: the driver's tuples, no result object.
_APPLIED = 'SELECT topic, "partition", "offset" FROM ledger_kafka_offsets WHERE group_id = ?'

_SHELLS = (ev.PaymentLinkRequested, ev.PaymentLinkFailed)
# Each step verifies what it wrote (chain_verify.verify_gained); the whole log is verified again
# every this many steps, and at the end.
whole_verify_steps = 100


class Violation(Exception):
    def __init__(self, step: int, invariant: str, detail: str, action: Action | None = None) -> None:
        super().__init__(f"step {step}: {invariant}: {detail}")
        self.step, self.invariant, self.detail, self.action = step, invariant, detail, action

    def __reduce__(self) -> tuple:  # back from a pool process whole
        return (Violation, (self.step, self.invariant, self.detail, self.action))


class Checks:
    def __init__(self, store: Store, model: Model) -> None:
        self.store, self.model = store, model
        self.position = 0
        self.head: tuple[int, bytes] = (0, GENESIS)
        self.answered_upto: dict[Any, int] = {}  # partition -> the last offset known answered, and all before it
        self.states: dict[str, BusinessState] = {}
        self.projector = Projector(store)
        self.replaying = Replaying(store)
        self.step, self.action = 0, None
        self.expected: Counter[str] = Counter()
        self.recorded: set[tuple[str, int]] = set()  # (door, offset) of the records whose decision the log holds

    def fail(self, invariant: str, detail: str) -> None:
        raise Violation(self.step, invariant, detail, self.action)

    def begin(self, step: int, action: Action) -> None:
        self.step, self.action = step, action

    # --- every outcome against the model -----------------------------------------

    def decided(self, door: str, sent: dict, out: dict, offset: int) -> None:
        """One record's outcome, in the order the ledger decided it. A record decided again
        (delivered again after a crash) is answered as a duplicate: recorded once."""
        command = sent["command"]
        first = (door, offset) not in self.recorded
        if not first and not out.get("duplicate"):
            self.fail("each message recorded once", f"{door}/{offset} ({command.get('command_id')}) recorded again: {out['events']}")
        if not out.get("duplicate"):
            self.recorded.add((door, offset))
        if sent.get("malformed"):
            expected = Expected("rejected", "malformed", ["CommandRejected"])
        else:
            expected = self.model.expect({**command, "_promises": sent.get("promises", False)}, door, sent["content"])
        self._match(expected, out, f"{command.get('type')} {command.get('command_id')}")
        if not out.get("duplicate"):
            self.expected.update(out["events"])
        if not sent.get("malformed"):
            self.model.learn(command, sent["content"], out)

    def paid(self, expected: Expected, payment: tuple, out: dict) -> None:
        if expected.status == "duplicate":
            if not out.get("duplicate"):
                self.fail("exactly one effect", f"a provider retry was not a duplicate: {out}")
            return
        self._match(expected, out, f"payment {payment[0]}")
        self.expected.update(out["events"])
        self.model.learn_payment(*payment, out)

    def _match(self, expected: Expected, out: dict, what: str) -> None:
        got = {"status": out.get("status"), "reason": out.get("reason"), "events": out.get("events")}
        want = {"status": expected.status, "reason": expected.reason, "events": expected.events}
        for key, value in expected.checks.items():
            got[key], want[key] = out.get(key), value
        if got != want:
            self.fail("the ledger decided as the contract says", f"{what}: expected {want}, got {got}")

    # --- after every step ----------------------------------------------------------

    def after_step(self, broker: Any, serve: Any, wrote: bool = True) -> None:
        """`wrote`: whether the step could have written (a door acted); a step that only sent
        to the broker or armed a fault changes nothing the checks read."""
        if not wrote:
            return
        if self._log_gained():
            # What the step wrote, chained on from the head verified last (the link there
            # unchanged); the whole log again every `whole_verify_steps` and at the end.
            whole = self.step % whole_verify_steps == 0
            verdict = (chain_verify.verify_store(self.store, self.head) if whole
                       else chain_verify.verify_gained(self.store, self.head))
            if not verdict.ok:
                self.fail("verify ok", str(verdict.report()))
            self.head = (verdict.position, verdict.hash)
        self._answered(broker)

    def _log_gained(self) -> bool:
        """Whether the log gained events: each folded, checked, and counted against the outcomes."""
        gained: Counter[str] = Counter()
        touched = set()
        for position, e in self.store.notifications(self.position + 1):
            self.position = position
            if type(e) not in _SHELLS:  # the shell's record of a link owed and its close: no outcome names them
                gained[e.type] += 1
            elif type(e) is ev.PaymentLinkRequested:
                self.model.business(e.business_id).requested[e.command_id] = e.amount
            state = self.states.setdefault(e.business_id, BusinessState(e.business_id or ""))
            if type(e) is ev.OrderPlaced and e.approves is None:
                self._within_limit(state, e)
            state.evolve(e)
            touched.add(e.business_id)
        if gained != self.expected:
            self.fail("no event the model did not expect", f"log gained {dict(gained)}, outcomes said {dict(self.expected)}")
        self.expected = Counter()
        for business_id in touched:
            self._state_holds(business_id)
        return bool(gained)

    def _within_limit(self, state: BusinessState, e: ev.OrderPlaced) -> None:
        """No order takes a customer past the limit, except one an owner approved."""
        c = state.customers[e.customer_id]
        if c.exposure + e.total > c.credit_limit:
            self.fail("exposure within the limit", f"{e.business_id}/{e.customer_id}: {c.exposure} + {e.total}"
                      f" > {c.credit_limit} ({e.command_id})")

    def _state_holds(self, business_id: str) -> None:
        """The log's fold: stock never negative, and every product, customer and order as the
        model has them."""
        state, b = self.states[business_id], self.model.business(business_id)
        for sku, product in state.products.items():
            if product.available < 0:
                self.fail("stock never negative", f"{business_id}/{sku}: {product.available}")
            if [product.unit_price, product.available] != b.products.get(sku):
                self.fail("the log folds to the model", f"{business_id}/{sku}: {product} vs {b.products.get(sku)}")
        for customer_id, c in state.customers.items():
            if [c.credit_limit, c.exposure] != b.customers.get(customer_id):
                self.fail("the log folds to the model", f"{business_id}/{customer_id}: {c} vs {b.customers.get(customer_id)}")
        for order_id, order in state.orders.items():
            mine = b.orders.get(order_id)
            if mine is None or (order.total, order.paid) != (mine.total, mine.paid):
                self.fail("outstanding = total - paid", f"{business_id}/{order_id}: {order} vs {mine}")

    def _answered(self, broker: Any) -> None:
        """Every command applied has its outcome published, or owed in an outbox row (read only
        when an applied offset has no published outcome: after a writer died between its commit
        and its publish)."""
        owed: set[tuple[str, int, int]] | None = None
        with sql.reading(self.store.engine) as conn:
            applied = sql.query(conn, _APPLIED, (GROUP,))
        for topic, partition, offset in applied:
            tp = TopicPartition(topic, partition)
            # Offsets answered (published) stay answered: each step looks from the first not known so.
            upto = self.answered_upto.get(tp, -1)
            for o in range(upto + 1, offset + 1):
                if (tp.topic, tp.partition, o) in broker.answered:
                    upto = o if upto == o - 1 else upto
                    continue
                owed = self._owed() if owed is None else owed
                if (tp.topic, tp.partition, o) not in owed:
                    self.fail("every command exactly one outcome", f"{tp.topic}/{tp.partition}/{o} applied, never answered")
            self.answered_upto[tp] = upto

    def _owed(self) -> set[tuple[str, int, int]]:
        """The sources of the outcomes the outbox still owes, and the commands held for the
        payment provider (answered by their holder, or by the next)."""
        owed = {(r.topic, r.partition, r.offset) for r in held.pending(self.store.engine, GROUP, list(PARTITIONS.values()))}
        for entry in outbox.pending(self.store.engine, GROUP, list(PARTITIONS.values())):
            for m in entry.messages:
                source = dict(m.headers).get(SOURCE_HEADER, b"").decode().rsplit("/", 2)
                owed.add((source[0], int(source[1]), int(source[2])))
        return owed

    # --- analysts, and the end ------------------------------------------------------

    def analyse(self, what: str) -> None:
        """An analyst's read: the projections kept level step by step equal a fresh replay (the
        rebuild's fold kept level with the log: sim/replaying.py)."""
        self.projector.catch_up()
        live = self._checksum()
        position, _ = self.projector.tracked()
        replayed = self.replaying.checksum(position)
        if replayed != live:
            self.fail("projections equal a fresh replay", f"{live} vs {replayed} (kept replay, at {position})")

    def at_end(self, broker: Any, serve: Any) -> None:
        """Once every message is applied: no link left owed half made, the whole log verifies,
        and the projections equal a fresh replay: the kept one, and a real rebuild of the tables."""
        self.after_step(broker, serve)
        verdict = chain_verify.verify_store(self.store, self.head)
        if not verdict.ok:
            self.fail("verify ok", str(verdict.report()))
        left = held.pending(self.store.engine, GROUP, list(PARTITIONS.values()))
        if left:
            self.fail("no command left held", ", ".join(f"{r.topic}/{r.partition}/{r.offset}" for r in left))
        for business_id, state in self.states.items():
            if state.link_requests:
                self.fail("no half-made link left owed", f"{business_id}: {sorted(state.link_requests)}")
        self.analyse("replay")
        live = self._checksum()
        rebuilt = self.projector.replay()
        if rebuilt.checksum != live:
            self.fail("projections equal a fresh replay", f"{live} vs {rebuilt.checksum} (rebuilt)")

    def _checksum(self) -> str | None:
        from projections import checksum
        from projections.projector import TABLES

        with self.store.engine.connect() as conn:
            return checksum.read(conn, TABLES)
