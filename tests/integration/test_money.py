"""Money a person can read: each business's currency (SetCurrency), minor units per CLDR, and
every human-facing view in major units with the currency while JSON keeps the integers."""
from __future__ import annotations


import pytest

from consumers.money import money
from tests.builders import command, known, line, order, raw
from tests.given import a_shop, agent, owner, types, appended
from tests.inproc import jsonl, ledger_done


def set_currency(code, business: str = "shop-1") -> dict:
    return command("SetCurrency", {"currency": known(code)}, business)


@pytest.mark.parametrize("amount, currency, shown", [
    (90_000, "NGN", "NGN 900.00"), (4_500_000, "NGN", "NGN 45,000.00"), (500, "JPY", "JPY 500"),
    (1_234_567, "KWD", "KWD 1,234.567"), (5, "USD", "USD 0.05"), (90_000, None, "90000")])
def test_amounts_show_in_major_units_with_the_currencys_own_minor_digits(amount, currency, shown):
    assert money(amount, currency) == shown


def test_the_owner_sets_the_currency_once_and_the_same_again_is_fine(ledger, store):
    before = store.max_position()

    first, again, other = owner(ledger, set_currency("NGN"), set_currency("NGN"), set_currency("USD"))

    assert [o["status"] for o in (first, again)] == ["accepted", "accepted"]
    assert (other["status"], other["reason"], other["details"]) == ("blocked", "already_exists", {"currency": "NGN"})
    assert types(appended(store, before)) == ["CurrencySet", "CurrencySet", "CommandBlocked"]
    assert store.load("shop-1").currency == "NGN"


@pytest.mark.parametrize("code", ["XYZ", "ngn", "NAIRA", 566])
def test_a_currency_that_is_not_iso_4217_is_malformed(ledger, code):
    [out] = owner(ledger, set_currency(code))

    assert (out["status"], out["reason"]) == ("rejected", "malformed")


def test_tables_show_major_units_and_json_keeps_minor_units(ledger, db_url, tmp_path):
    a_shop(ledger)
    owner(ledger, set_currency("NGN"))
    agent(ledger, order("cust-1", [line("rice", 2)]))

    as_json = ledger_done("audit", "orders", "--db", db_url)
    as_table = ledger_done("audit", "orders", "--table", "--db", db_url)
    (tmp_path / "agent.jsonl").write_bytes(raw(order("cust-1", [line("beans", 1)])) + b"\n")
    outcome = ledger_done("process", str(tmp_path / "agent.jsonl"), "--table", "--db", db_url)

    assert [r["total"] for r in jsonl(as_json.stdout)] == [90_000]
    assert "NGN 900.00" in as_table.stdout.decode() and "90000" not in as_table.stdout.decode()
    assert "total NGN 30.00" in outcome.stdout.decode()


def test_the_demo_speaks_naira():
    done = ledger_done("demo", "--db", "sqlite:///:memory:")

    assert done.returncode == 0, done.stderr.decode()
    assert "total NGN 900.00" in done.stdout.decode()
