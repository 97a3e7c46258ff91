"""ISO 4217 currency codes and their minor units, as CLDR has them (the kept table).

The table ships as commands/currencies.txt (one `CODE DIGITS` a line, ~2 KB) rather than
Babel itself (~36 MB installed, for one table). It is generated from Babel's CLDR data at
development time: `python -m commands.currencies` rewrites it, and
tests/unit/test_currencies.py holds the shipped file equal to what Babel says now.
"""
from __future__ import annotations

from functools import cache
from pathlib import Path

TABLE = Path(__file__).resolve().with_name("currencies.txt")
digits_default = 2  # CLDR's own default, for a code its table gives no digits of its own (as Babel answers)
_HEADER = "# ISO 4217 code, digits after the decimal point (CLDR via Babel): python -m commands.currencies\n"


@cache
def minor_digits_by_code() -> dict[str, int]:
    rows = (line.split() for line in TABLE.read_text("ascii").splitlines() if line and not line.startswith("#"))
    return {code: int(digits) for code, digits in rows}


def is_currency(code: str) -> bool:
    return code in minor_digits_by_code()


def minor_digits(code: str) -> int:
    """How many digits a minor unit has (NGN 2, JPY 0, KWD 3)."""
    return minor_digits_by_code().get(code, digits_default)


def render() -> str:
    """The table as Babel's CLDR data has it today (Babel is in the test group, not the base install)."""
    from babel.numbers import get_currency_precision, list_currencies

    return _HEADER + "".join(f"{code} {get_currency_precision(code)}\n" for code in sorted(list_currencies()))


if __name__ == "__main__":
    TABLE.write_text(render(), "ascii")
