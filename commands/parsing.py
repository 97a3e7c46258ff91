"""Raw bytes in, a command or a typed rejection out; never an exception.

The order is the contract's: readability first, then the door, then the rest of the shape.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import ValidationError

from commands.limits import raw_excerpt_bytes_max
from commands.models import COMMAND_TYPES, DOORS, Command, is_id


@dataclass(frozen=True)
class Rejection:
    """Input that could not be read as a command (reason `malformed`)."""
    error: str
    raw: str
    command_id: str | None = None
    type: str | None = None
    business_id: str | None = None
    agent_id: str | None = None
    conversation_id: str | None = None
    turn_id: str | None = None
    reason: str = "malformed"


@dataclass(frozen=True)
class NotPermitted:
    """A readable command of a type the door does not take."""
    command_id: str
    type: str
    business_id: str
    agent_id: str | None = None
    conversation_id: str | None = None
    turn_id: str | None = None
    reason: str = "not_permitted"


@dataclass(frozen=True)
class Parsed:
    command: Command
    content: bytes = field(repr=False)  # canonical JSON: what "the same command" means




def _id(obj: dict[str, Any], key: str) -> str | None:
    """An envelope id as the outcome may show it: one that breaks the contract's rule for ids
    is unreadable (null), never carried into an outcome, a log or a column."""
    value = obj.get(key)
    return value if is_id(value) else None


def excerpt(raw: bytes | str) -> str:
    """At most 1 KiB of the raw input, as text any column can hold: invalid bytes, lone
    surrogates and NUL (PostgreSQL's text refuses it) shown as U+FFFD, and the cut never
    leaves a partial character or goes past the limit."""
    if isinstance(raw, str):
        raw = raw[:raw_excerpt_bytes_max].encode("utf-8", errors="surrogatepass")
    text = raw[:raw_excerpt_bytes_max].decode("utf-8", errors="replace").replace("\x00", "\ufffd")
    return text.encode("utf-8")[:raw_excerpt_bytes_max].decode("utf-8", errors="ignore")


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"]) or "(root)"
    if first["type"] == "model_type":  # the generic type's name says nothing to a person
        return excerpt(f"{where}: expected an object")
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    # A fact's name is the sender's text: cut and cleaned like the raw input.
    return excerpt(f"{where}: {first['msg']}{more}")


def parse(raw: bytes | str, door: str) -> Parsed | Rejection | NotPermitted:
    if isinstance(raw, str):
        raw = raw.encode("utf-8", errors="replace")
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return Rejection(error=f"invalid JSON: {exc}", raw=excerpt(raw))
    if not isinstance(obj, dict):
        return Rejection(error=f"expected a JSON object, got {type(obj).__name__}", raw=excerpt(raw))
    kind = obj.get("type")
    envelope = dict(
        command_id=_id(obj, "command_id"),
        # a string first: a list or object `type` is unreadable, not a crash
        type=kind if isinstance(kind, str) and kind in COMMAND_TYPES else None,
        business_id=_id(obj, "business_id"),
        agent_id=_id(obj, "agent_id"),
        conversation_id=_id(obj, "conversation_id"),
        turn_id=_id(obj, "turn_id"))
    unreadable = [k for k in ("command_id", "type", "business_id") if envelope[k] is None]
    if unreadable:
        return Rejection(error=f"unreadable {', '.join(unreadable)}", raw=excerpt(raw), **envelope)
    if envelope["type"] not in DOORS[door]:
        return NotPermitted(**envelope)
    try:
        command = DOORS[door][envelope["type"]].model_validate(obj)
    except ValidationError as exc:
        return Rejection(error=_first_error(exc), raw=excerpt(raw), **envelope)
    return Parsed(command=command, content=orjson.dumps(obj, option=orjson.OPT_SORT_KEYS))
