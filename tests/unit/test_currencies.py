"""The currency table ships with the package (commands/currencies.txt) and is CLDR's, not a
hand list: it must be what Babel's data says, code for code and digit for digit."""
from __future__ import annotations

from babel.numbers import get_currency_precision, list_currencies

from commands.currencies import TABLE, is_currency, minor_digits, minor_digits_by_code, render


def test_the_shipped_table_is_what_the_generator_prints_from_babel():
    assert TABLE.read_text("ascii") == render(), "run: python -m commands.currencies"


def test_every_babel_currency_has_babels_minor_digits_and_no_other_code_is_a_currency():
    assert minor_digits_by_code() == {code: get_currency_precision(code) for code in list_currencies()}
    assert not is_currency("XYZ") and not is_currency("ngn")


def test_a_code_without_digits_of_its_own_gets_cldrs_default_as_babel_does():
    assert minor_digits("XYZ") == get_currency_precision("XYZ") == 2
