"""Money as a person reads it: integer minor units shown in major units with the currency.

`money(90000, "NGN")` is "NGN 900.00"; `money(500, "JPY")` is "JPY 500" (no minor unit). The
digits per currency are CLDR's (commands/currencies.txt, generated from Babel), not a hand list. A
business that set no currency has its amounts shown as they are stored, in minor units ("90000"). Machine output (JSON) never goes through here: it keeps the integers.
"""
from __future__ import annotations

from commands.currencies import minor_digits

# The names amounts go by, in outcomes, events, details and views: what is shown as money.
AMOUNTS = frozenset({"total", "paid", "outstanding", "credit_limit", "exposure", "unit_price", "order_total",
                     "amount", "line_total", "overpaid_amount"})


def money(amount: int | None, currency: str | None) -> str:
    if amount is None:
        return ""
    if currency is None:
        return str(amount)
    digits = minor_digits(currency)
    major, minor = divmod(abs(amount), 10 ** digits)  # integers throughout: no float rounding
    sign = "-" if amount < 0 else ""
    return f"{currency} {sign}{major:,}" + (f".{minor:0{digits}d}" if digits else "")


def spoken(amount: int, currency: str | None) -> str:
    """An amount in a text an agent relays: `money`'s, and without a currency, what the number is
    ("90,000 minor units"): never divided by a guessed number of digits."""
    return money(amount, currency) if currency else f"{amount:,} minor units"


def parse_money(text: str, currency: str | None) -> int | None:
    """What a person typed ("2,940.50") in minor units, or None if it is not an amount of the
    currency (more decimals than it has, a sign, letters). Without a currency: minor units."""
    digits = minor_digits(currency) if currency else 0
    whole, _, fraction = text.strip().replace(",", "").partition(".")
    if not whole.isdigit() or not whole.isascii() or len(fraction) > digits \
            or (fraction and not (fraction.isdigit() and fraction.isascii())):
        return None
    return int(whole) * 10 ** digits + int(fraction.ljust(digits, "0") or 0)
