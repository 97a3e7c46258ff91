"""What a what-if world (ledger/whatif.py) forgets of each business: its old orders, link
references, escalations and escalated turns, kept in a private scratch file and read back when
a decision names them, as the writer reads its own back from the store's tables
(ledger/states.py). Without it a fold of a long log holds every order the log ever placed, and
the what-if's memory grows with the log.

A turn whose escalations are all closed is forgotten outright: closing is final, so such a
turn covers no promise (`BusinessState.has_open_escalation`) whatever is raised in it later.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from itertools import islice

from ledger.core.state import BusinessState, Link, Order

# Orders, references, escalations and escalated turns a world keeps in memory a business; the
# older ones are in the scratch file. A log is decided in order, so what a decision names is
# mostly recent; a miss costs one indexed read of the file.
kept_max = 1_000

_CLOSED = ("resolved", "dismissed")

_TABLES = """
CREATE TABLE orders (world INTEGER, business TEXT, id TEXT, customer_id TEXT, total INTEGER, paid INTEGER,
                     reference TEXT, url TEXT, amount INTEGER, PRIMARY KEY (world, business, id)) WITHOUT ROWID;
CREATE TABLE links (world INTEGER, business TEXT, reference TEXT, order_id TEXT,
                    PRIMARY KEY (world, business, reference)) WITHOUT ROWID;
CREATE TABLE escalations (world INTEGER, business TEXT, id TEXT, status TEXT,
                          PRIMARY KEY (world, business, id)) WITHOUT ROWID;
CREATE TABLE turns (world INTEGER, business TEXT, conversation TEXT, turn TEXT, escalation_id TEXT,
                    UNIQUE (world, business, conversation, turn, escalation_id));
"""
_COLUMNS = {"orders": "business, id, customer_id, total, paid, reference, url, amount",
            "links": "business, reference, order_id", "escalations": "business, id, status",
            "turns": "business, conversation, turn, escalation_id"}


class Scratch:
    """Both worlds' forgotten rows in one private file (each row says its world: 0 or 1)."""

    def __init__(self) -> None:
        self.db = sqlite3.connect("", isolation_level=None)  # "": a temporary file, deleted on close
        self.db.execute("PRAGMA journal_mode=OFF")
        self.db.executescript(_TABLES)
        self.forgot: set[tuple[int, str, str]] = set()  # (world, business, table) holding rows: else nothing is read

    def close(self) -> None:
        """The file goes (SQLite deletes a temporary database when its connection closes)."""
        self.db.close()

    def forget(self, world: int, state: BusinessState) -> None:
        """All but the last `kept_max` of each kind out of memory, into the file (turns first,
        while their escalations' statuses are still in memory)."""
        b = state.business_id
        turns = _oldest(state.escalated_turns)
        open_turns = [(world, b, c, t, i) for (c, t), ids in turns
                      if not all(state.escalations.get(i) in _CLOSED for i in ids) for i in ids]
        self._put("turns", world, b, "INSERT OR IGNORE", open_turns)
        self._put("escalations", world, b, "INSERT OR REPLACE",
                  [(world, b, i, status) for i, status in _oldest(state.escalations)])
        self._put("links", world, b, "INSERT OR REPLACE",
                  [(world, b, r, order_id) for r, order_id in _oldest(state.link_orders)])
        self._put("orders", world, b, "INSERT OR REPLACE", [
            (world, b, i, o.customer_id, o.total, o.paid, *((o.live_link.reference, o.live_link.url, o.live_link.amount)
                                                            if o.live_link else (None, None, None)))
            for i, o in _oldest(state.orders)])

    def _put(self, table: str, world: int, business: str, verb: str, rows: list[tuple]) -> None:
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            self.db.executemany(f"{verb} INTO {table} VALUES ({marks})", rows)
            self.forgot.add((world, business, table))

    def copy(self, source: int, target: int, business: str) -> None:
        """A business's forgotten rows of one world as the other's (the what-if world parting)."""
        for table, columns in _COLUMNS.items():
            if (source, business, table) in self.forgot:
                self.db.execute(f"INSERT OR REPLACE INTO {table} SELECT ?, {columns} FROM {table}"
                                f" WHERE world = ? AND business = ?", (target, source, business))
                self.forgot.add((target, business, table))

    def recall_orders(self, world: int, state: BusinessState, order_ids: Iterable[str] = (),
                      references: Iterable[str] = ()) -> None:
        """The named orders (by id, or by a link's reference) back in `state` where it lacks them."""
        b = state.business_id
        wanted = list(order_ids)
        for reference in references:
            if reference not in state.link_orders and (world, b, "links") in self.forgot:
                for (order_id,) in self._read("SELECT order_id FROM links WHERE world = ? AND business = ?"
                                              " AND reference = ?", (world, b, reference)):
                    state.link_orders[reference] = order_id
            wanted.append(state.link_orders.get(reference))
        if (world, b, "orders") not in self.forgot:
            return
        for order_id in wanted:
            if order_id is not None and order_id not in state.orders:
                for customer_id, total, paid, reference, url, amount in self._read(
                        "SELECT customer_id, total, paid, reference, url, amount FROM orders WHERE world = ?"
                        " AND business = ? AND id = ?", (world, b, order_id)):
                    link = None if reference is None else Link(reference, url, amount)
                    state.orders[order_id] = Order(customer_id, total, paid, link)

    def recall_escalations(self, world: int, state: BusinessState, ids: Iterable[str]) -> None:
        b = state.business_id
        if (world, b, "escalations") not in self.forgot:
            return
        for i in ids:
            if i not in state.escalations:
                for (status,) in self._read("SELECT status FROM escalations WHERE world = ? AND business = ?"
                                            " AND id = ?", (world, b, i)):
                    state.escalations[i] = status

    def recall_turn(self, world: int, state: BusinessState, turn: tuple[str, str]) -> None:
        """A turn's escalations (those raised since it was forgotten kept) and their statuses."""
        b = state.business_id
        if (world, b, "turns") in self.forgot:
            forgotten = [i for (i,) in self._read("SELECT escalation_id FROM turns WHERE world = ? AND business = ?"
                                                  " AND conversation = ? AND turn = ? ORDER BY rowid", (world, b, *turn))]
            if forgotten:
                state.escalated_turns[turn] = tuple(dict.fromkeys((*forgotten, *state.escalated_turns.get(turn, ()))))
        self.recall_escalations(world, state, state.escalated_turns.get(turn, ()))

    def _read(self, statement: str, parameters: tuple) -> list[tuple]:
        return self.db.execute(statement, parameters).fetchall()


def _oldest(kept: dict) -> list[tuple]:
    """The entries past the last `kept_max`, taken out of `kept` (oldest first)."""
    over = len(kept) - kept_max
    if over <= 0:
        return []
    taken = list(islice(kept.items(), over))
    for key, _ in taken:
        del kept[key]
    return taken
