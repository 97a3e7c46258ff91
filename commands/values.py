"""The values a command's facts are made of: ids, free text, amounts, currency codes, order
lines, and the Facts base with `required` and `optional` (commands/models.py declares each
command type's facts with them)."""
from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictInt, StrictStr

from commands.currencies import is_currency
from commands.facts import REQUIRED, Required, fact
from commands.invisible import INVISIBLE_CLASS
from commands.limits import amount_max, id_chars_max, text_chars_max

# Quantities, prices and limits above amount_max are not amounts a shop means, and sums of
# them would overflow 64-bit storage.
PositiveInt = Annotated[StrictInt, Field(gt=0, le=amount_max)]
NonNegativeInt = Annotated[StrictInt, Field(ge=0, le=amount_max)]

# Unicode category Cc: C0, DEL and C1. No column or driver has to hold them in an id (a NUL
# is refused by PostgreSQL's text), and no person can read them.
_CONTROL_CLASS = "\\u0000-\\u001f\\u007f-\\u009f"
_control = re.compile(f"[{_CONTROL_CLASS}]")
# Nor invisible ones (commands/invisible.py: format, bidi controls, default-ignorables): "shop-1"
# and "shop-1" + U+200B would be two businesses that look alike, and U+202E turns an id around.
_unreadable = re.compile(f"[{_CONTROL_CLASS}{INVISIBLE_CLASS}]")


def is_id(value: object) -> bool:
    """The contract's id (section 11): 1..128 characters, no control or invisible character, not blank."""
    return (isinstance(value, str) and 0 < len(value) <= id_chars_max
            and not value.isspace() and _unreadable.search(value) is None)


def _id_problem(value: str) -> str:
    if value.isspace():
        return "an id must not be only whitespace"
    if _control.search(value):
        return "an id must not hold control characters"
    return "an id must not hold invisible characters (format, bidi control, default-ignorable)"


# Ids and free text are checked by pydantic-core's regex engine, not by a Python call per
# value: its `\s` is exactly `str.isspace` outside the control characters (every code point
# compared). A mismatch is reported as these messages say (PATTERN_ERRORS, parsing's errors).
_NOT_IN_ID = _CONTROL_CLASS + INVISIBLE_CLASS
_id_pattern = f"^[^{_NOT_IN_ID}]*[^\\s{_NOT_IN_ID}][^{_NOT_IN_ID}]*$"
_text_pattern = "^[^\\u0000]*$"
Id = Annotated[StrictStr, Field(min_length=1, max_length=id_chars_max, pattern=_id_pattern)]
FreeText = Annotated[StrictStr, Field(max_length=text_chars_max, pattern=_text_pattern)]
PATTERN_ERRORS: dict[str, Callable[[str], str]] = {
    _id_pattern: _id_problem,
    _text_pattern: lambda _: "text must not hold NUL (U+0000)",
}


def _iso_4217(code: str) -> str:
    if not is_currency(code):
        raise ValueError(f"{code!r} is not an ISO 4217 currency code")
    return code


CurrencyCode = Annotated[StrictStr, Field(pattern=r"^[A-Z]{3}$"), AfterValidator(_iso_4217)]


class Line(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    sku: Id
    quantity: PositiveInt


class Facts(BaseModel):
    """Base of every command's facts: absent means unknown, unknown names are malformed."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @classmethod
    @cache
    def required_names(cls) -> tuple[str, ...]:
        return tuple(sorted(
            name for name, field in cls.model_fields.items()
            if any(isinstance(m, Required) for m in field.metadata)))

    @classmethod
    @cache
    def names(cls) -> tuple[str, ...]:
        """The facts' names, in declaration order (pydantic builds `model_fields` afresh on every look)."""
        return tuple(cls.model_fields)

    def unknown_required(self) -> list[str]:
        return [n for n in self.required_names() if not getattr(self, n).known and getattr(self, n).status != "conflict"]

    def conflicting_required(self) -> dict[str, list[Any]]:
        return {n: list(getattr(self, n).values or []) for n in self.required_names()
                if getattr(self, n).status == "conflict"}

    def unsettled_required(self) -> tuple[list[str], dict[str, list[Any]]]:
        """`unknown_required()` and `conflicting_required()`, in one look at each required fact."""
        unknown: list[str] = []
        conflicts: dict[str, list[Any]] = {}
        for n in self.required_names():
            fact = getattr(self, n)
            if not fact.known:
                if fact.status == "conflict":
                    conflicts[n] = list(fact.values or [])
                else:
                    unknown.append(n)
        return unknown, conflicts

    def known_values(self) -> dict[str, Any]:
        return {n: getattr(self, n).value for n in self.names() if getattr(self, n).known}


def required(tp: Any, hint: str | None = None) -> Any:
    """A fact the command cannot take effect without; `hint` as for `optional`."""
    return Annotated[optional(tp, hint), REQUIRED]


def optional(tp: Any, hint: str | None = None) -> Any:
    """A fact whose known value must be a `tp`; `hint`: what it is, as an agent's tool says it
    (commands/tools.py; the fact's name when there is none)."""
    return fact(tp) if hint is None else Annotated[fact(tp), Field(description=hint)]
