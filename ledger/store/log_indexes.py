"""The log's indexes beyond the recorder's own, for `ledger audit command`, which reads a
command's events without reading the log: one on its events' command ids, and one on each
business's `CurrencySet` (the currency its amounts were read in), partial: no other event enters it.

The command ids' index is on an expression of the stored bytes, so the log's table and its appends stay as
they are: the command id's JSON as `codec.encode` wrote it. Every state is that encoder's, which
writes the base fields first and in order (`{"business_id":...,"command_id":...,"recorded_at":`),
and no `"` inside a JSON string goes unescaped, so the first `"command_id":` is the key and the
first `,"recorded_at":` ends its value. The value is cut to `key_bytes_max` (an index entry has a
size limit on PostgreSQL, and a rejected command's id was never checked): a reader compares the
events it finds exactly. The indexes themselves are the baseline revision's
(migrations/versions/0001_baseline.py), built on these same expressions: a change to one here
is a new revision (tests/integration/test_schema.py checks that each query is served by its index).
"""
from __future__ import annotations

from collections.abc import Iterator

from sqlalchemy.engine import Engine

from ledger.core import codec
from ledger.store import sql
from ledger.store.recorder import stream_id

key_bytes_max = 600  # the longest id the gate admits (128 characters) escaped, and its quotes
_KEY, _NEXT = b'"command_id":', b',"recorded_at":'
_CURRENCY = "CurrencySet"
# SQLite keeps any value a column is given: as bytes, an edited text state is found too.
_SQLITE = "substr(CAST(state AS BLOB), {start} + {skip}, min(max({end} - {start} - {skip}, 0), {most}))"
_POSTGRESQL = "substring(state from {start} + {skip} for least(greatest({end} - {start} - {skip}, 0), {most}))"


def _expression(engine: Engine) -> str:
    """The index's own expression: each database matches an index by its expression."""
    sqlite = _SQLITE.format(start=f"instr(CAST(state AS BLOB), X'{_KEY.hex()}')",
                            end=f"instr(CAST(state AS BLOB), X'{_NEXT.hex()}')",
                            skip=len(_KEY), most=key_bytes_max)
    postgresql = _POSTGRESQL.format(start=f"position('\\x{_KEY.hex()}'::bytea in state)",
                                    end=f"position('\\x{_NEXT.hex()}'::bytea in state)",
                                    skip=len(_KEY), most=key_bytes_max)
    return sql.for_dialect(engine, sqlite, postgresql)


def command_query(engine: Engine, table: str) -> str:
    """The rows whose command id's cut is the one given (?), by the index on it."""
    return f'SELECT id, topic, state FROM "{table}" WHERE {_expression(engine)} = ? ORDER BY id'


def currency_query(table: str) -> str:
    """A stream's (?) last CurrencySet up to a position (?), by the partial index. The topic is
    in the text, not a parameter: only then does a database know the partial index serves."""
    return (f'SELECT state FROM "{table}" WHERE originator_id = ? AND topic = \'{_CURRENCY}\' AND id <= ?'
            " ORDER BY id DESC LIMIT 1")


def currency_at(engine: Engine, table: str, business_id: str, position: int) -> str | None:
    """The business's currency as it stood at `position` (its last `CurrencySet` up to it)."""
    with sql.reading(engine) as conn:
        found = sql.query(conn, currency_query(table), (sql.uuid_value(conn)(stream_id(business_id)), position))
    return codec.decode(_CURRENCY, bytes(found[0][0])).currency if found else None


def rows(engine: Engine, table: str, command_id: str) -> Iterator[tuple[int, str, bytes]]:
    """The (position, topic, state) rows whose command id may be `command_id`, in log order."""
    key = codec.dumps(command_id)[:key_bytes_max]
    with sql.reading(engine) as conn:
        found = sql.query(conn, command_query(engine, table), (key,))
    return iter([(position, topic, state if type(state) is bytes else _as_bytes(state)) for position, topic, state in found])


def _as_bytes(state: object) -> bytes:
    """A state as its bytes: PostgreSQL's driver may give a memoryview, and SQLite an edited text."""
    return state.encode("utf-8", "surrogatepass") if isinstance(state, str) else bytes(state)
