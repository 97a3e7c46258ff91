"""The Fact: how a command carries one piece of world state, and what counts as known.

An agent that does not know a thing must be able to say so; `unknown` is a value here,
never a missing key that later turns into a guess.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

T = TypeVar("T")

Status = Literal["known", "unknown", "conflict"]

def is_empty(value: Any) -> bool:
    # `0` and `False` are real answers; only null, "", [] and {} mean "nothing was said".
    return value is None or (isinstance(value, (str, list, dict)) and len(value) == 0)


@lru_cache(maxsize=None)
def _adapter(fact_class: type) -> TypeAdapter | None:
    """The value's validator for Fact[T], keyed by the class (hashed by identity), not by T
    (a typing construct, hashed by walking its parts on every lookup)."""
    args = fact_class.__pydantic_generic_metadata__["args"]
    return TypeAdapter(args[0]) if args else None


class Fact(BaseModel, Generic[T]):
    """One fact. Its value is type-checked only when it counts as known.

    Emptiness is judged before type: a `known` fact with `[]` is unknown, not malformed.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    status: Status = Field(description=(
        "known: you were told or looked it up, give value and source. unknown: you do not "
        "know it; say so, never invent a value. conflict: you have several candidates, "
        "list them in values."))
    value: Any = Field(default=None, description="The value, only when status is known.")
    values: list[Any] | None = Field(default=None, description="The candidates, only when status is conflict.")
    source: str | None = Field(default=None, description="Where the value came from: session, message, lookup, owner.")

    @property
    def known(self) -> bool:
        return (self.status == "known" and not is_empty(self.value)
                and isinstance(self.source, str) and self.source != "")

    @model_validator(mode="after")
    def _value_typed_when_known(self) -> "Fact[T]":
        adapter = _adapter(type(self))
        if adapter is not None and self.known:
            object.__setattr__(self, "value", adapter.validate_python(self.value, strict=True))
        return self


UNKNOWN: Fact[Any] = Fact(status="unknown")


class Required:
    """Marks a fact field a command cannot take effect without."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = Required()
