"""What a request may say, checked before anything is read: a value that is not one (a
position past 64 bits, a date that is none, NUL, a lone surrogate, a 10,000-character filter)
is answered 400 with a page saying which, never a 500. PostgreSQL refuses NUL and lone
surrogates that SQLite would take, so neither reaches a query."""
from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from datetime import date

from commands.limits import amount_max, id_chars_max, text_chars_max
from consumers.money import money, parse_money

position_max = 2**63 - 1      # a log position is a signed 64-bit integer
amount_chars_max = 32         # "9,007,199,254,740,991.00" and some room: longer is no amount


class BadRequest(ValueError):
    """A parameter that is not one; its text says which, for the person who sent it."""


def text(query: Mapping[str, str], name: str, chars_max: int = id_chars_max) -> str | None:
    value = query.get(name, "").strip()
    if not value:
        return None
    if len(value) > chars_max:
        raise BadRequest(f"{name} is longer than {chars_max} characters")
    if any(unicodedata.category(ch) in ("Cc", "Cs") for ch in value):
        raise BadRequest(f"{name} holds a control character or a broken one")
    return value


def note(form: Mapping[str, str]) -> str:
    return text(form, "note", text_chars_max) or ""


def position(query: Mapping[str, str], name: str) -> int | None:
    value = query.get(name, "").strip()
    if not value:
        return None
    if not (value.isascii() and value.isdigit()) or len(value) > 19 or int(value) > position_max:
        raise BadRequest(f"{name} is not a position in the log")
    return int(value)


def since(query: Mapping[str, str]) -> str | None:
    """A date (YYYY-MM-DD) or a position."""
    value = query.get("since", "").strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():
        return str(position(query, "since"))
    try:
        if len(value) == 10:
            return date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    raise BadRequest("since is not a date (YYYY-MM-DD)")


def choice(query: Mapping[str, str], name: str, allowed: tuple[str, ...] | frozenset[str]) -> str | None:
    value = query.get(name, "").strip()
    if not value:
        return None
    if value not in allowed:
        raise BadRequest(f"{name} is not one of {', '.join(sorted(allowed))}")
    return value


def amount(form: Mapping[str, str], name: str, currency: str | None) -> int:
    """An amount a person typed, in minor units; BadRequest says why it is not one."""
    typed = form.get(name, "").strip()
    unit = f"in {currency}, like {money(250_000, currency).split(' ', 1)[1]}" if currency else "in minor units, like 250000"
    if len(typed) > amount_chars_max:
        raise BadRequest(f"that is not an amount ({unit})")
    found = parse_money(typed, currency)
    if found is None:
        raise BadRequest(f"that is not an amount ({unit})")
    if found > amount_max:
        raise BadRequest("that amount is larger than the ledger keeps")
    return found


def whole(form: Mapping[str, str], name: str) -> int:
    """A count a person typed (a quantity): a whole number above 0."""
    typed = form.get(name, "").strip().replace(",", "")
    if not (typed.isascii() and typed.isdigit()) or len(typed) > 16 or not 0 < int(typed) <= amount_max:
        raise BadRequest("that is not a whole number above 0")
    return int(typed)
