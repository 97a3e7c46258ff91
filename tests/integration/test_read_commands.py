"""Read commands never create a ledger, and refuse arguments the contract does not know (CONTRACT 12)."""
from __future__ import annotations

import pytest
from sqlalchemy import create_engine, inspect

from tests.inproc import jsonl, ledger_main
from tests.given import a_shop

READS = [["events"], ["audit", "blocks"], ["audit", "intents"], ["replay"], ["project"],
         ["query", "price", "--business", "shop-1", "--sku", "rice"]]


@pytest.mark.parametrize("read", READS, ids=lambda r: " ".join(r[:2]))
def test_a_read_on_a_missing_sqlite_file_is_exit_1_and_creates_no_file(read, tmp_path):
    path = tmp_path / "typo.db"

    status, _, err = ledger_main(*read, "--db", f"sqlite:///{path}")

    assert status == 1
    assert not path.exists()
    assert err.splitlines() == [f"ledger: no ledger at {path}"]


def test_a_read_with_no_db_option_in_an_empty_folder_creates_no_ledger_db(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LEDGER_DB_URL", raising=False)

    status, _, err = ledger_main("audit", "blocks")

    assert status == 1
    assert list(tmp_path.iterdir()) == []
    assert "no ledger at ledger.db" in err


@pytest.mark.parametrize("read", READS, ids=lambda r: " ".join(r[:2]))
def test_a_read_on_a_database_without_the_log_creates_no_tables_and_is_exit_1(read, db_url):
    engine = create_engine(db_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE unrelated (x INTEGER)")  # the database exists, holds no ledger

    status, _, err = ledger_main(*read, "--db", db_url)

    assert status == 1
    assert "no ledger at" in err
    assert inspect(engine).get_table_names() == ["unrelated"]
    engine.dispose()


@pytest.mark.parametrize("since", ["yesterday", "2026-13-01", "12/01/2026", "1.5"])
def test_a_since_that_is_not_a_position_nor_iso_8601_is_a_usage_error(since, ledger, db_url):
    status, _, err = ledger_main("audit", "blocks", "--since", since, "--db", db_url)

    assert status == 2
    assert "ISO 8601" in err


@pytest.mark.parametrize("since", ["2026-12-01", "2026-12-01T09:30:00Z", "2026-12-01T10:30:00+01:00", "3"])
def test_a_since_that_is_a_position_or_iso_8601_is_accepted(since, ledger, db_url):
    a_shop(ledger)

    assert ledger_main("audit", "blocks", "--since", since, "--db", db_url)[0] == 0


def test_a_since_time_compares_in_utc_whatever_offset_it_was_given_in(ledger, db_url):
    from tests.builders import UNKNOWN, order
    from tests.given import agent
    a_shop(ledger)
    agent(ledger, order("cust-1", UNKNOWN, command_id="c-1"))
    recorded = jsonl(ledger_main("audit", "blocks", "--db", db_url)[1])
    assert len(recorded) == 1

    future = jsonl(ledger_main("audit", "blocks", "--since", "2999-01-01T01:00:00+01:00", "--db", db_url)[1])
    past = jsonl(ledger_main("audit", "blocks", "--since", "2000-01-01T00:00:00-05:00", "--db", db_url)[1])

    assert (future, past) == ([], recorded)


def test_a_block_reason_the_contract_does_not_know_is_a_usage_error_listing_the_valid_ones(ledger, db_url):
    status, _, err = ledger_main("audit", "blocks", "--reason", "unknown_fact", "--db", db_url)

    assert status == 2
    assert "unknown_facts" in err and "credit_limit_exceeded" in err


def test_an_event_type_the_contract_does_not_know_is_a_usage_error_listing_the_valid_ones(ledger, db_url):
    status, _, err = ledger_main("events", "--type", "Bogus", "--db", db_url)

    assert status == 2
    assert "OrderPlaced" in err
