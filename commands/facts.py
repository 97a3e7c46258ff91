"""The Fact: how a command carries one piece of world state, and what counts as known.

An agent that does not know a thing must be able to say so; `unknown` is a value here,
never a missing key that later turns into a guess.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Generic, Literal, TypeVar, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

T = TypeVar("T")

Status = Literal["known", "unknown", "conflict"]

_FACT_KEYS = frozenset(("status", "value", "values", "source"))


def is_empty(value: Any) -> bool:
    # `0` and `False` are real answers; only null, "", [] and {} mean "nothing was said".
    return value is None or (isinstance(value, (str, list, dict)) and len(value) == 0)


class Fact(BaseModel):
    """One fact. Its value is type-checked only when it counts as known (see `fact`).

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


class KnownFact(Fact, Generic[T]):
    """A fact given as known, well formed around its value: the value must be a T. Only
    `_shape` sends a fact here, and only one that counts as known (its value, checked
    strictly, is the value given): `known` is a constant, not worked out at every look."""

    value: T
    known: ClassVar[bool] = True


def _shape(given: Any) -> str:
    """Which schema checks a fact as given: `known` when it is a well-formed Fact that counts
    as known (so only its value is left to check, against its type), else `loose`: the Fact's
    shape alone, which is also where a malformed shape is reported, as a Fact reports it.
    Called for every fact of every command: the cheapest tests come first."""
    if type(given) is not dict or given.get("status") != "known":
        return "loose"
    source, value = given.get("source"), given.get("value")
    if type(source) is not str or source == "" or is_empty(value) or not given.keys() <= _FACT_KEYS:
        return "loose"
    return "known" if type(given.get("values")) in _LIST_OR_NONE else "loose"


_LIST_OR_NONE = (list, type(None))


@dataclass(frozen=True)
class ValueType:
    """A fact field's value type, kept beside the field for tools' schemas."""
    type: Any


def fact(tp: Any) -> Any:
    """A fact field whose known value must be a `tp`. pydantic-core checks it all (one small
    function picks the branch): no Python validator runs per fact."""
    return Annotated[Union[Annotated[KnownFact[tp], Tag("known")], Annotated[Fact, Tag("loose")]],
                     Discriminator(_shape), ValueType(tp)]


def value_type(metadata: list[Any]) -> Any:
    """The value type of a fact field declared with `fact`, from its field's metadata."""
    return next(m.type for m in metadata if isinstance(m, ValueType))


UNKNOWN = Fact(status="unknown")


class Required:
    """Marks a fact field a command cannot take effect without."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = Required()
