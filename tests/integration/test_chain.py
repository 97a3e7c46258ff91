"""The tamper-evident log (CONTRACT 12): every event chained by SHA-256; `ledger verify` finds
the first event altered, removed, inserted or reordered, at its exact position."""
from __future__ import annotations

import uuid

import pytest
from sqlalchemy import create_engine, text

from ledger.chain import GENESIS, link
from ledger.store import Store
from tests.builders import UNKNOWN, line, order
from tests.given import a_shop, agent
from tests.inproc import jsonl, ledger_main


def a_log(ledger) -> int:
    """A shop, two orders and a block: 6 events. Returns the last position."""
    a_shop(ledger)
    agent(ledger, order("cust-1", [line("rice", 1)], command_id="c-1"), order("cust-1", UNKNOWN, command_id="c-2"))
    agent(ledger, order("cust-1", [line("beans", 1)], command_id="c-3"))
    return ledger.store.max_position()


def verify(db_url: str, *argv: str) -> tuple[int, dict]:
    status, out, _ = ledger_main("verify", *argv, "--db", db_url)
    (report,) = jsonl(out)
    return status, report


def tamper(db_url: str, *statements: tuple[str, dict]) -> None:
    engine = create_engine(db_url)
    with engine.begin() as conn:
        for sql, params in statements:
            conn.execute(text(sql), params)
    engine.dispose()


def a_stream(db_url: str):
    """A new stream id as the events table stores it on this backend."""
    return uuid.uuid4().bytes if db_url.startswith("sqlite") else uuid.uuid4()


def event_row(db_url: str, position: int) -> tuple[str, bytes]:
    engine = create_engine(db_url)
    with engine.connect() as conn:
        topic, state = conn.execute(text("SELECT topic, state FROM ledger_events WHERE id = :p"), {"p": position}).one()
    engine.dispose()
    return topic, bytes(state)


def test_an_untouched_log_verifies_with_its_event_count_and_head(ledger, db_url):
    last = a_log(ledger)

    status, report = verify(db_url)

    assert status == 0
    assert report == {"events": 6, "head": report["head"], "ok": True}
    previous = GENESIS
    for position in range(1, last + 1):
        previous = link(previous, position, *event_row(db_url, position))
    assert report["head"] == previous.hex()


def test_an_empty_log_verifies_with_the_genesis_head(store, db_url):
    assert verify(db_url) == (0, {"events": 0, "head": GENESIS.hex(), "ok": True})


def test_an_edited_payload_is_found_at_its_position(ledger, db_url):
    a_log(ledger)
    topic, state = event_row(db_url, 4)
    tamper(db_url, ("UPDATE ledger_events SET state = :s WHERE id = 4", {"s": state.replace(b'"rice"', b'"rIce"')}))

    status, report = verify(db_url)

    assert status == 1
    assert (report["ok"], report["first_bad_position"]) == (False, 4)
    assert report["reason"]


def test_an_edited_type_is_found_at_its_position(ledger, db_url):
    a_log(ledger)
    tamper(db_url, ("UPDATE ledger_events SET topic = 'ReplyRecorded' WHERE id = 5", {}))

    assert verify(db_url)[1]["first_bad_position"] == 5


def test_a_deleted_event_is_found_at_its_position(ledger, db_url):
    a_log(ledger)
    tamper(db_url, ("DELETE FROM ledger_events WHERE id = 3", {}))

    status, report = verify(db_url)

    assert (status, report["first_bad_position"]) == (1, 3)


def test_the_last_event_deleted_is_found_at_its_position(ledger, db_url):
    last = a_log(ledger)
    tamper(db_url, ("DELETE FROM ledger_events WHERE id = :p", {"p": last}))

    assert verify(db_url) == (1, {"ok": False, "first_bad_position": last, "reason": verify(db_url)[1]["reason"]})


def test_two_swapped_events_are_found_at_the_first_of_them(ledger, db_url):
    a_log(ledger)
    (t2, s2), (t5, s5) = event_row(db_url, 2), event_row(db_url, 5)
    tamper(db_url, ("UPDATE ledger_events SET topic = :t, state = :s WHERE id = 2", {"t": t5, "s": s5}),
           ("UPDATE ledger_events SET topic = :t, state = :s WHERE id = 5", {"t": t2, "s": s2}))

    assert verify(db_url)[1]["first_bad_position"] == 2


def test_a_forged_event_appended_is_found_at_its_position(ledger, db_url):
    last = a_log(ledger)
    topic, state = event_row(db_url, last)
    tamper(db_url, ("INSERT INTO ledger_events (id, originator_id, originator_version, topic, state)"
                    " VALUES (:p, :o, 1, :t, :s)", {"p": last + 1, "o": a_stream(db_url), "t": topic, "s": state}))

    assert verify(db_url)[1]["first_bad_position"] == last + 1


def test_a_forged_event_inserted_in_a_gap_is_found_at_its_position(ledger, db_url):
    a_shop(ledger)
    tamper(db_url, ("UPDATE ledger_events SET id = id + 10 WHERE id = 3", {}), ("DELETE FROM ledger_chain WHERE position = 3", {}),
           ("INSERT INTO ledger_chain (position, hash) SELECT 13, hash FROM ledger_chain WHERE position = 2", {}))
    # a log with a hole at 3 could be valid only if chained so: re-chain it honestly, then forge into the hole
    store = Store(db_url)
    rechain(store)
    topic, state = event_row(db_url, 13)
    tamper(db_url, ("INSERT INTO ledger_events (id, originator_id, originator_version, topic, state)"
                    " VALUES (3, :o, 1, :t, :s)", {"o": a_stream(db_url), "t": topic, "s": state}))

    assert verify(db_url)[1]["first_bad_position"] == 3


def rechain(store: Store) -> None:
    """What an editor with write access could do: recompute every link over the log as it stands."""
    rows = [r for page in store.rows() for r in page]
    previous, links = GENESIS, []
    for position, topic, state in rows:
        previous = link(previous, position, topic, bytes(state))
        links.append({"p": position, "h": previous})
    with store.engine.begin() as conn:
        conn.execute(text("DELETE FROM ledger_chain"))
        conn.execute(text("INSERT INTO ledger_chain (position, hash) VALUES (:p, :h)"), links)
    store.close()


def test_head_prints_the_verified_position_and_hash(ledger, db_url):
    last = a_log(ledger)

    status, head = verify(db_url, "--head")

    assert status == 0
    assert head == {"position": last, "hash": verify(db_url)[1]["head"]}


def test_a_log_that_grew_still_extends_a_head_kept_before(ledger, db_url):
    a_log(ledger)
    _, head = verify(db_url, "--head")
    agent(ledger, order("cust-1", [line("rice", 1)], command_id="c-9"))

    status, report = verify(db_url, "--since-head", f"{head['position']}:{head['hash']}")

    assert (status, report["ok"]) == (0, True)
    assert report["events"] == 7


def test_a_rewritten_chain_verifies_alone_but_not_against_a_head_kept_before(ledger, db_url):
    a_log(ledger)
    _, head = verify(db_url, "--head")
    topic, state = event_row(db_url, 2)
    tamper(db_url, ("UPDATE ledger_events SET state = :s WHERE id = 2", {"s": state.replace(b"\"recorded_at\":\"2", b"\"recorded_at\":\"1")}))
    rechain(Store(db_url))

    assert verify(db_url)[0] == 0
    status, report = verify(db_url, "--since-head", f"{head['position']}:{head['hash']}")
    assert (status, report["ok"], report["first_bad_position"]) == (1, False, head["position"])


def test_a_log_cut_short_does_not_extend_a_head_kept_before(ledger, db_url):
    last = a_log(ledger)
    _, head = verify(db_url, "--head")
    tamper(db_url, ("DELETE FROM ledger_events WHERE id = :p", {"p": last}),
           ("DELETE FROM ledger_chain WHERE position = :p", {"p": last}))

    status, report = verify(db_url, "--since-head", f"{head['position']}:{head['hash']}")

    assert (status, report["first_bad_position"]) == (1, last)


def test_since_head_that_is_not_position_colon_hash_is_a_usage_error(ledger, db_url):
    assert ledger_main("verify", "--since-head", "12", "--db", db_url)[0] == 2


def test_gaps_in_positions_left_by_rolled_back_writes_still_verify(ledger, db_url):
    a_shop(ledger)
    with pytest.raises(RuntimeError):
        with ledger.store.engine.begin() as conn:
            conn.execute(text("INSERT INTO ledger_events (originator_id, originator_version, topic, state)"
                              " VALUES (:o, 1, 'X', :s)"), {"o": a_stream(db_url), "s": b"{}"})
            raise RuntimeError("rolled back")  # on PostgreSQL the sequence moved on: a gap
    agent(ledger, order("cust-1", [line("rice", 1)], command_id="c-1"))

    assert verify(db_url) == (0, {"events": 4, "head": verify(db_url)[1]["head"], "ok": True})


def test_a_log_written_before_the_chain_is_chained_when_a_writer_opens_it(ledger, db_url):
    a_log(ledger)
    head_before = verify(db_url)[1]["head"]
    tamper(db_url, ("DROP TABLE ledger_chain", {}))

    assert verify(db_url)[0] == 1  # nothing to hold the log against yet
    Store(db_url).create_tables()

    assert verify(db_url) == (0, {"events": 6, "head": head_before, "ok": True})


def pages(rows: list, size: int) -> list[list]:
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def chained(n: int) -> tuple[list, list]:
    events = [(p, "ReplyRecorded", b'{"n":%d}' % p) for p in range(1, n + 1)]
    previous, links = GENESIS, []
    for position, topic, state in events:
        previous = link(previous, position, topic, state)
        links.append((position, previous))
    return events, links


@pytest.mark.parametrize("event_page,link_page", [(3, 2), (2, 3), (4, 4), (1, 7)])
@pytest.mark.parametrize("at", [1, 4, 6, 12])
def test_verify_finds_each_tampering_at_its_position_whatever_the_pages(event_page, link_page, at):
    from ledger.chain import verify as verify_pages
    events, links = chained(12)
    i = at - 1
    altered = events[:i] + [(at, "ReplyRecorded", b'{"n":0}')] + events[i + 1:]
    removed = events[:i] + events[i + 1:]
    swapped = events[:i - 1] + [(at - 1, *events[i][1:]), (at, *events[i - 1][1:])] + events[i + 1:] if at > 1 else None
    forged = events + [(13, "ReplyRecorded", b"{}")]

    def first_bad(log: list) -> int | None:
        verdict = verify_pages(pages(log, event_page), pages(links, link_page))
        return None if verdict.ok else verdict.position

    assert first_bad(events) is None
    assert first_bad(altered) == at
    assert first_bad(removed) == at
    if swapped:
        assert first_bad(swapped) == at - 1
    assert first_bad(forged) == 13
    assert verify_pages(pages(events, event_page), pages(links, link_page), (at, links[i][1])).ok
    assert verify_pages(pages(events, event_page), pages(links, link_page), (at, GENESIS)).position == at
