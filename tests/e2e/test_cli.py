"""The command line as a user runs it (CONTRACT 9): a real `ledger` process, JSON Lines out, exit statuses."""
from __future__ import annotations

import pytest

from ledger.store.database import Store
from tests.builders import UNKNOWN, customer, line, order, product
from tests.given import a_shop, agent
from tests.process import jsonl, ledger_run, lines_of

UNREACHABLE = "postgresql+psycopg://postgres@127.0.0.1:1/x"


SHOP = lines_of(product("rice", 45000, 10), customer("cust-1", 10**6))


def rice_left(url: str) -> int | None:
    store = Store(url)
    try:
        rice = store.load("shop-1").products.get("rice")
        return rice.available if rice else None
    finally:
        store.close()


def test_process_exits_0_with_one_outcome_a_line_blocked_and_rejected_included(ledger, db_url, tmp_path):
    a_shop(ledger)
    path = tmp_path / "agent.jsonl"
    path.write_bytes(lines_of(order("cust-1", [line("rice", 2)], command_id="c-1"))
                     + b"{not json\n\n"
                     + lines_of(order("cust-1", UNKNOWN, command_id="c-3"), product("beans", 1, 1, command_id="c-4")))

    done = ledger_run("process", str(path), "--db", db_url)

    assert done.returncode == 0, done.stderr.decode()
    outs = jsonl(done.stdout)
    assert [(o["command_id"], o["status"], o["reason"]) for o in outs] == [
        ("c-1", "accepted", None), (None, "rejected", "malformed"), ("c-3", "blocked", "unknown_facts"),
        ("c-4", "blocked", "not_permitted")]


def test_admin_apply_reads_stdin_and_answers_each_line(db_url):
    done = ledger_run("admin", "apply", "--db", db_url, stdin=SHOP + lines_of(product("rice", 1, 1)))

    assert done.returncode == 0, done.stderr.decode()
    assert [(o["status"], o["reason"]) for o in jsonl(done.stdout)] == [
        ("accepted", None), ("accepted", None), ("blocked", "already_exists")]
    assert rice_left(db_url) == 10


@pytest.mark.parametrize("argv", [["frobnicate"], ["process", "no-such-file.jsonl"],
                                  ["serve", "--bootstrap-servers", "127.0.0.1:1", "--fetch-wait-ms", "0"]],
                         ids=["unknown_subcommand", "missing_file", "serve_fetch_wait_below_1_ms"])
def test_a_usage_error_exits_2(tmp_path, argv):
    done = ledger_run(*argv, "--db", f"sqlite:///{tmp_path}/x.db", cwd=tmp_path)

    assert (done.returncode, done.stdout) == (2, b"")
    assert done.stderr.strip()


@pytest.mark.parametrize("argv", [["process", "-"], ["query", "stock", "--business", "b", "--sku", "x"]],
                         ids=["process", "query"])
def test_an_unreachable_database_exits_1_with_a_one_line_reason(argv):
    done = ledger_run(*argv, "--db", UNREACHABLE, stdin=SHOP)

    assert (done.returncode, done.stdout) == (1, b"")
    assert len(done.stderr.decode().strip().splitlines()) == 1


def test_ledger_db_url_is_used_without_db_and_db_wins_over_it(tmp_path):
    from_env, flag = f"sqlite:///{tmp_path}/from_env.db", f"sqlite:///{tmp_path}/flag.db"

    applied = ledger_run("admin", "apply", "-", stdin=SHOP, cwd=tmp_path, env={"LEDGER_DB_URL": from_env})
    overridden = ledger_run("admin", "apply", "-", "--db", flag, stdin=SHOP[:SHOP.index(b"\n") + 1], cwd=tmp_path,
                            env={"LEDGER_DB_URL": from_env})

    assert (applied.returncode, overridden.returncode) == (0, 0)
    assert (rice_left(from_env), rice_left(flag)) == (10, 10)
    assert (len(jsonl(applied.stdout)), len(jsonl(overridden.stdout))) == (2, 1)
    assert not (tmp_path / "ledger.db").exists()


def test_without_db_or_env_the_database_is_ledger_db_in_the_current_folder(tmp_path):
    done = ledger_run("admin", "apply", "-", stdin=SHOP, cwd=tmp_path)

    assert done.returncode == 0, done.stderr.decode()
    assert rice_left(f"sqlite:///{tmp_path}/ledger.db") == 10


def test_query_answers_price_and_stock_left_after_placed_orders(ledger, db_url):
    a_shop(ledger)
    agent(ledger, order("cust-1", [line("rice", 3)]))

    price = ledger_run("query", "price", "--business", "shop-1", "--sku", "rice", "--db", db_url)
    stock = ledger_run("query", "stock", "--business", "shop-1", "--sku", "rice", "--db", db_url)

    assert (price.returncode, stock.returncode) == (0, 0)
    assert jsonl(price.stdout) == [{"business_id": "shop-1", "sku": "rice", "unit_price": 45000}]
    assert jsonl(stock.stdout) == [{"business_id": "shop-1", "sku": "rice", "available": 7}]
