"""A replay's rows stay byte for byte what they were: the bench's deterministic log, replayed,
gives the checksum it gave when this test was written (main at dc93317), kept rows written
once at the end or, past `rows_kept`, read back and rewritten as the fold goes. A faster
replay that changes one byte of one row fails here, on both backends."""
from __future__ import annotations

import pytest

from bench import synthetic
from projections.businesses import businesses
from projections.projector import TABLES, Projector
from projections.rows import Fresh
from tests.projected import every_row

EVENTS = 6_000  # every event type the script writes, across 10 businesses
WRITTEN = "a79de7967cac580ee45238e3f2db5c065bb5142e1492e54e94508f85dd993fea"


@pytest.mark.parametrize("rows_kept", [600_000, 1_000])
def test_a_replay_of_a_fixed_log_writes_the_rows_it_always_wrote(store, rows_kept):
    synthetic.fill(store, EVENTS)
    projector = Projector(store, page_events=2_000, rows_kept=rows_kept)

    done = projector.replay()

    assert done.events == EVENTS
    assert projector.checksum() == WRITTEN
    assert done.checksum in (WRITTEN, None)


def test_a_fresh_view_is_spent_by_the_flush_that_writes_its_kept_rows(store):
    Projector(store)  # the tables, empty
    view, key = Fresh(TABLES), ("shop-1",)
    view.put(businesses, key, [1, "shop-1", "NGN"])
    with store.engine.begin() as conn:
        view.flush(conn)

    assert every_row(store)["proj_businesses"] == [(1, "shop-1", "NGN")]
    with pytest.raises(KeyError):
        view.get(businesses, key)
