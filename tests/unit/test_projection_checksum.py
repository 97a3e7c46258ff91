"""The projections' checksum hashes each table's rows on its own, in log order: a replay can
hash rows as it writes them, in any order of tables, and rows it cannot vouch for the order
of leave no digest (the replay then reads the tables back)."""
from __future__ import annotations

from projections.checksum import Digest
from projections.projector import TABLES

blocks, intents = (next(t for t in TABLES if t.name == name) for name in ("proj_blocks", "proj_intents"))


def block(position: int) -> list:
    return [position, "c", "b", None, None, None, "PlaceOrder", "blocked", "unknown_facts", "[]", "{}", "{}", None, "t"]


def intent(position: int) -> list:
    return [position, "b", "conv", f"turn-{position}", '["inquiry"]', "inquiry", "[]", "t"]


def test_the_digest_does_not_depend_on_the_order_tables_are_written_in_or_on_how_rows_are_batched():
    given = Digest(TABLES)
    given.add(blocks, [block(1), block(3)])
    given.add(intents, [intent(2)])
    when = Digest(TABLES)
    when.add(intents, [intent(2)])
    when.add(blocks, [block(1)])
    when.add(blocks, [block(3)])
    assert when.hexdigest() == given.hexdigest() is not None


def test_rows_of_a_table_out_of_log_order_across_writes_leave_no_digest():
    digest = Digest(TABLES)
    digest.add(blocks, [block(5)])
    digest.add(blocks, [block(3)])  # a row written before one it follows: a table rewritten
    assert digest.hexdigest() is None


def test_different_rows_give_a_different_digest():
    one, other = Digest(TABLES), Digest(TABLES)
    one.add(blocks, [block(1)])
    other.add(blocks, [block(2)])
    assert one.hexdigest() != other.hexdigest()
