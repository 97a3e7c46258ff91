"""The event store: the log, its idempotency claims and the writer's order tables, in one database.

Each job has its module: `recorder` appends to the log (chained, `chain`), `log_reads` reads
it, `claims` holds the first outcome of each command id, `kept_orders` the orders the writer
keeps out of memory, and `sql` whatever differs between SQLite and PostgreSQL; the tables are
the schema's revisions (`schema`, `migrations`). `Store` opens the database and writes a
batch's parts in one transaction, or none of them.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from eventsourcing.persistence import IntegrityError, OperationalError, PersistenceError
from eventsourcing_sqlalchemy.datastore import SQLAlchemyDatastore
from sqlalchemy import inspect
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError as SQLAlchemyIntegrityError
from sqlalchemy.sql import Executable

from ledger.store import chain, claims, log_indexes, kept_escalations, kept_orders, log_reads, schema, snapshots, sql
from ledger.core import codec
from ledger.core import events as ev
from ledger.store.claims import Claim
from ledger.store.kept_escalations import KeptEscalations
from ledger.store.kept_orders import KeptOrder
from ledger.store.recorder import Recorder, stream_id
from ledger.core.state import BusinessState, Order

__all__ = ["Bound", "Claim", "IntegrityError", "Kept", "KeptEscalations", "KeptOrder", "OperationalError", "PersistenceError", "Statement",
           "Store", "execute", "stream_id"]


class Bound(NamedTuple):
    """A statement whose text is always the same, and its values for one run: executed as
    `conn.execute(clause, params)`. (`clause.bindparams(...)` would copy the clause and
    compute its cache key again on every batch.)"""
    clause: Executable
    params: dict[str, Any]


Statement = Executable | Bound  # what a door adds to a batch's transaction


class Kept(NamedTuple):
    """What a batch leaves in the writer's own tables, beside its events: the orders and
    escalations it changed, and the snapshots it took."""
    orders: Sequence[KeptOrder] = ()
    escalations: KeptEscalations = KeptEscalations()
    snapshots: Sequence[snapshots.Snapshot] = ()


def execute(conn: Connection, statement: Statement) -> None:
    if type(statement) is Bound:
        conn.execute(statement.clause, statement.params)
    else:
        conn.execute(statement)


class Store:
    def __init__(self, url: str, follower: bool = False):
        """`follower`: for a process that only follows the log (sql.tune)."""
        self.url = url
        self.datastore = SQLAlchemyDatastore(url=url)
        assert self.datastore.engine is not None
        self.engine = self.datastore.engine
        sql.tune(self.engine, follower)
        self.recorder = Recorder(self.datastore, events_table_name="ledger_events")
        self.events = self.recorder.events_record_cls.__table__

    def create_tables(self) -> None:
        """Before a writer's first write: the schema brought to the code's revision (made, in an
        empty database), and the log's chain found whole (`chain.require_whole`)."""
        self.upgrade_schema()
        chain.require_whole(self.engine, self.events.name)

    def upgrade_schema(self) -> None:
        """The schema at the code's revision; one a newer ledger wrote is refused (`schema`)."""
        schema.bring_to_head(self.engine)

    def close(self) -> None:
        self.engine.dispose()

    def has_log(self) -> bool:
        """Whether the log's table exists here (asked without creating anything)."""
        return inspect(self.engine).has_table(self.events.name)

    # --- reading: ledger/store/log_reads.py, claims.py, kept_orders.py ---------------------

    def load(self, business_id: str, state: BusinessState | None = None) -> BusinessState:
        """The fold of the business's whole stream (every order in it): the log's own answer."""
        return log_reads.load(self.engine, self.events, business_id, state)

    def load_recent(self, business_id: str) -> snapshots.Loaded | None:
        """The writer's state from the latest snapshot and the events after it (the orders
        those events move only), or None: then `load`."""
        return snapshots.load(self.engine, self.events, business_id)

    def catch_up(self, state: BusinessState) -> int:
        """The events the state's stream gained since it, folded in (`snapshots.catch_up`): how many."""
        return snapshots.catch_up(self.engine, self.events, state)

    def notifications(self, start: int = 1, stop: int | None = None, types: Sequence[str] = (),
                      business_id: str | None = None) -> Iterator[tuple[int, ev.Event]]:
        return log_reads.notifications(self.engine, self.events, start, stop, types, business_id)

    def rows(self, start: int = 1, stop: int | None = None) -> Iterator[list[tuple[int, str, bytes]]]:
        return log_reads.rows(self.engine, self.events.name, start, stop)

    def currency_at(self, business_id: str, position: int) -> str | None:
        return log_indexes.currency_at(self.engine, self.events.name, business_id, position)

    def rows_of_command(self, command_id: str) -> Iterator[tuple[int, str, bytes]]:
        """The log's rows that may name this command id, by the index on it (compare exactly)."""
        return log_indexes.rows(self.engine, self.events.name, command_id)

    def events_at(self, positions: Iterable[int]) -> dict[int, ev.Event]:
        return log_reads.events_at(self.engine, self.events, positions)

    def max_position(self) -> int:
        return self.recorder.max_notification_id() or 0

    def claims_for(self, scope: str, business_id: str | None, keys: Iterable[str]) -> dict[str, Claim]:
        return claims.claimed(self.engine, scope, business_id, keys)

    def claims_among(self, keys: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str, str], Claim]:
        """The claims made on these (scope, business id or "", key)s, in one query on
        PostgreSQL however many businesses: a batch's, at once."""
        return claims.claimed_among(self.engine, keys)

    def orders_for(self, business_id: str | None, order_ids: Iterable[str]) -> dict[str, Order]:
        return kept_orders.orders_for(self.engine, business_id, order_ids)

    def link_order(self, business_id: str | None, reference: str) -> str | None:
        return kept_orders.link_order(self.engine, business_id, reference)

    def escalation_statuses(self, business_id: str | None, escalation_ids: Iterable[str]) -> dict[str, str]:
        return kept_escalations.statuses(self.engine, business_id, escalation_ids)

    def escalated_turns(self, business_id: str | None,
                        turns: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, ...]]:
        return kept_escalations.escalated(self.engine, business_id, turns)

    # --- writing --------------------------------------------------------------

    # perf: bench.lone: a Core transaction, not the library's ORM session: ~0.1 ms of a lone command's ~0.6 ms (b8d9cfe).
    def write(self, appended: Sequence[tuple[int, ev.Event]], new_claims: Sequence[Claim] = (),
              statements: Sequence[Statement] = (), kept: Kept | Sequence[KeptOrder] = (),
              commit: bool = True, states: Sequence[bytes] | None = None) -> list[int]:
        """Append (stream version, event) pairs, claims, what they leave in the writer's tables
        (`kept`: the orders and escalations they changed, the snapshots due; orders alone, as
        a sequence) and any extra statements atomically. With commit=False, everything is written and then rolled back:
        whether the database would take it, and nothing kept. `states`: the events as
        `codec.encode` wrote them, if the caller has (else they are encoded here).

        Raises IntegrityError when another writer got there first (a stream version or a
        claim): the caller decides again on fresh state.
        """
        if states is None:
            states = [codec.encode(e) for _, e in appended]
        rows = [(stream_id(e.business_id), version, type(e).__name__, state)
                for (version, e), state in zip(appended, states, strict=True)]
        self.datastore.init_sqlite_wal_mode()  # once; the library did it on its first transaction
        try:
            # A Core transaction, not the library's ORM session: nothing here needs its objects,
            # and a lone command would pay for them.
            with self.engine.connect() as conn, conn.begin() as transaction:
                sql.begin_writing(conn)
                claims.insert(conn, new_claims)
                kept = kept if isinstance(kept, Kept) else Kept(kept)
                kept_orders.keep(conn, kept.orders)
                kept_escalations.keep(conn, kept.escalations)
                snapshots.keep(conn, kept.snapshots)
                for statement in statements:
                    execute(conn, statement)
                # Last: on PostgreSQL the events table stays locked from here to the commit (so
                # positions become visible in order), and other writers wait for that lock.
                positions = self.recorder.append(conn, rows) if rows else []
                if not commit:
                    transaction.rollback()
                return positions
        except SQLAlchemyIntegrityError as exc:
            raise IntegrityError(exc) from exc
