"""A rebuild's writer (projections/writer.py): rows sent as JSON, on a thread of their own,
land exactly as the driver would bind them, and hash the same; what JSON cannot carry
exactly takes the driver's way; a row written again replaces the one at its position; a
failed write is raised on the caller's thread."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from projections import checksum, writer
from projections.orders import customers
from projections.projector import Projector
from projections.rows import insert, stored_columns

BIG = 2**53 + 1  # past what JSON readers hold exactly as an integer


def _stored(store) -> list[tuple]:
    with store.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(select(*stored_columns(customers)).order_by(customers.c.position))]


def _row(position: int, name: str, credit_limit: int = 5) -> list:
    return [position, "shop", f"cust-{position}", name, credit_limit, -credit_limit, "2026-12-02T00:00:00Z"]


def _written_by_writer(store, pages: list[list[list]]) -> str | None:
    digest = checksum.Digest([customers])
    with store.engine.begin() as conn, writer.Writer(conn, digest) as beside:
        conn.execute(customers.delete())
        for rows in pages:
            beside.add(customers, rows, hashed=True)
        beside.close()
    return digest.hexdigest()


def _written_by_driver(store, rows: list[list]) -> str | None:
    digest = checksum.Digest([customers])
    with store.engine.begin() as conn:
        conn.execute(customers.delete())
        insert(conn, customers, rows)
        digest.add(customers, rows)
    return digest.hexdigest()


def _hostile(store) -> list[list]:
    rows = [_row(1, "plain"), _row(2, "x" * 10_000), _row(3, 'é"\\\n\t\x01 😀 ],[ \\u0000'), _row(4, "big", BIG),
            _row(5, "biggest", 2**63 - 1)]
    if store.engine.dialect.name == "sqlite":  # PostgreSQL text cannot hold U+0000
        rows.append(_row(6, "a\x00b"))
    return rows


def test_rows_json_cannot_carry_land_and_hash_as_the_driver_binds_them(store):
    Projector(store)  # the projection tables
    rows = _hostile(store)
    # given each row a page of its own: the fast way for the plain ones, the driver's for the rest
    by_writer = _written_by_writer(store, [[list(r)] for r in rows])
    written = _stored(store)

    assert by_writer == _written_by_driver(store, rows)
    assert written == _stored(store)
    assert [r[4] for r in written] == [5, 5, 5, BIG, 2**63 - 1, *([5] if len(rows) == 6 else [])]


def test_a_page_with_one_row_json_cannot_carry_is_written_whole_the_drivers_way(store):
    Projector(store)
    rows = _hostile(store)

    assert _written_by_writer(store, [[list(r) for r in rows]]) == _written_by_driver(store, rows)
    assert len(_stored(store)) == len(rows)


def test_a_row_written_again_replaces_the_one_at_its_position(store):
    Projector(store)
    with store.engine.begin() as conn, writer.Writer(conn, None) as beside:
        conn.execute(customers.delete())
        beside.add(customers, [_row(1, "first"), _row(2, "other")])
        beside.add(customers, [_row(1, "second")])  # JSON's way
        beside.add(customers, [_row(1, "third", BIG)])  # the driver's way
        beside.close()

    assert [r[3] for r in _stored(store)] == ["third", "other"]


def test_a_write_that_fails_is_raised_on_the_callers_thread(store):
    Projector(store)
    with pytest.raises(UnicodeEncodeError):
        with store.engine.begin() as conn, writer.Writer(conn, None) as beside:
            beside.add(customers, [_row(1, "lone \ud800 surrogate")])  # orjson refuses it; so does the driver
            beside.close()
    assert _stored(store) == []


def _refusal(write) -> type[BaseException]:
    try:
        write()
    except Exception as exc:  # noqa: BLE001 - the refusal itself is what is compared
        return type(exc)
    raise AssertionError("the row was not refused")


def test_an_integer_past_64_bits_signed_is_refused_as_the_driver_refuses_it(store):
    Projector(store)
    rows = [_row(1, "past", 2**63)]  # orjson writes it; JSON readers would keep it as a float

    assert _refusal(lambda: _written_by_writer(store, [rows])) is _refusal(lambda: _written_by_driver(store, rows))
    assert _stored(store) == []
