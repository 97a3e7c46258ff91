"""Raw bytes in, a command or a typed rejection out; never an exception.

The order is the contract's: readability first, then the door, then the rest of the shape.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import orjson
from pydantic import ValidationError

from commands.json_keys import duplicated
from commands.limits import json_depth_max, line_bytes_max, raw_excerpt_bytes_max
from commands.models import COMMAND_TYPES, DOORS, Command
from commands.values import PATTERN_ERRORS, is_id


@dataclass(frozen=True)
class Oversized:
    """A line or message over line_bytes_max, of which a reader kept only the head: it is
    answered rejected/malformed without ever being held whole."""
    head: bytes
    size: int  # bytes, as far as the reader counted


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
    """A readable command this door does not take from its sender; `details["why"]` says which
    way (CONTRACT 6: a type of the other door here, or, at the agent door, a token's limits)."""
    command_id: str
    type: str
    business_id: str
    agent_id: str | None = None
    conversation_id: str | None = None
    turn_id: str | None = None
    reason: str = "not_permitted"
    claimed: dict[str, Any] | None = field(default=None, repr=False)  # facts as readable: see readable_facts
    details: dict[str, Any] = field(default_factory=dict)


# Why a type is not taken at a door: it is the other door's.
WRONG_DOOR = {"agent": "owner_command_at_agent_door", "owner": "agent_command_at_owner_door"}


@dataclass(frozen=True)
class Parsed:
    command: Command
    content: bytes = field(repr=False)  # canonical JSON: what "the same command" means
    claimed: dict[str, Any] | None = field(default=None, repr=False)  # envelope and facts as given: the JSON


_FACT_KEYS = ("status", "value", "values", "source")
# Every ASCII digit to "0", anything else to " ": a run of 20 zeros is an integer orjson reads as a float.
_DIGITS_AS_ZERO = bytes(b"0"[0] if chr(i).isdigit() and i < 128 else b" "[0] for i in range(256))
_LONG_DIGITS = b"0" * 20


def claimed(item: Parsed | NotPermitted) -> dict[str, Any]:
    """The command as it was claimed, for the log: its envelope and its facts as given. `parse`
    keeps it from the JSON it read (no model is dumped again); an item made elsewhere gets its
    envelope and no facts."""
    if item.claimed is not None:
        return item.claimed
    head = item.command if isinstance(item, Parsed) else item
    return {"command_id": head.command_id, "type": head.type, "business_id": head.business_id,
            "agent_id": head.agent_id, "conversation_id": head.conversation_id, "turn_id": head.turn_id,
            "facts": {}}


def readable_facts(facts: Any) -> dict[str, Any]:
    """A not-yet-validated command's facts, as far as they read as Facts: each JSON object
    under its name, with the Fact keys it has (anything else in it is dropped)."""
    if not isinstance(facts, dict):
        return {}
    return {name: {k: fact[k] for k in _FACT_KEYS if k in fact}
            for name, fact in facts.items() if isinstance(fact, dict)}


def _exactly(obj: Any, raw: bytes) -> Any:
    """The document orjson read, with its integers exact: orjson reads one past 64 bits as a
    float, so a document that may hold one (a run of 20 digits) is read again by the standard
    library (orjson has already refused what it would not take: NaN, infinities, lone surrogates).
    `find`, not `in`: `in` tries the needle as an integer first, an exception raised and cleared."""
    if raw.translate(_DIGITS_AS_ZERO).find(_LONG_DIGITS) >= 0:
        return json.loads(raw)
    return obj


def _canonical(obj: dict[str, Any]) -> bytes:
    """Sorted keys, no spaces: what "the same command" means. The standard library writes an
    integer past 64 bits, which orjson refuses."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _id(obj: dict[str, Any], key: str) -> str | None:
    """An envelope id as the outcome may show it: one that breaks the contract's rule for ids
    is unreadable (null), never carried into an outcome, a log or a column."""
    value = obj.get(key)
    return value if is_id(value) else None


def excerpt(raw: bytes | str | Oversized) -> str:
    """At most 1 KiB of the raw input (of an Oversized, the head kept), as text any column can
    hold: invalid bytes, lone surrogates and NUL (PostgreSQL's text refuses it) shown as U+FFFD,
    and the cut never leaves a partial character or goes past the limit."""
    if isinstance(raw, Oversized):
        raw = raw.head
    if isinstance(raw, str):
        raw = raw[:raw_excerpt_bytes_max].encode("utf-8", errors="surrogatepass")
    text = raw[:raw_excerpt_bytes_max].decode("utf-8", errors="replace").replace("\x00", "\ufffd")
    return text.encode("utf-8")[:raw_excerpt_bytes_max].decode("utf-8", errors="ignore")


def _where(loc: tuple[Any, ...]) -> str:
    """A path as the sender wrote it: a fact's branch (`fact`'s tag, and `value` under a known
    one) is the validator's, not the sender's."""
    if len(loc) > 2 and loc[0] == "facts" and loc[2] in ("known", "loose"):
        loc = loc[:2] + loc[4 if loc[2] == "known" and loc[3:4] == ("value",) else 3:]
    return ".".join(str(p) for p in loc) or "(root)"


def first_error(exc: ValidationError) -> str:
    """The first thing a model found wrong, where it is, and how many more: every door's
    input is explained to its sender this one way."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    where = _where(first["loc"])
    if first["type"] == "model_type":  # the generic type's name says nothing to a person
        return excerpt(f"{where}: expected an object")
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    if first["type"] == "string_pattern_mismatch" and first["ctx"]["pattern"] in PATTERN_ERRORS:
        first["msg"] = f"Value error, {PATTERN_ERRORS[first['ctx']['pattern']](first['input'])}"
    # A fact's name is the sender's text: cut and cleaned like the raw input.
    return excerpt(f"{where}: {first['msg']}{more}")


def _too_large(head: bytes, size: int) -> Rejection:
    return Rejection(error=f"over {line_bytes_max} bytes ({size} bytes): not read", raw=excerpt(head))


def parse(raw: bytes | str | Oversized, door: str) -> Parsed | Rejection | NotPermitted:
    if isinstance(raw, Oversized):
        return _too_large(raw.head, raw.size)
    if isinstance(raw, str):
        raw = raw.encode("utf-8", errors="replace")
    if len(raw) > line_bytes_max:
        return _too_large(raw, len(raw))
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return Rejection(error=f"invalid JSON: {exc}", raw=excerpt(raw))
    if _deeper_than(raw, obj, json_depth_max):  # before any reader or writer that recurses
        return Rejection(error=f"nested deeper than {json_depth_max} levels: not read", raw=excerpt(raw),
                         **(_envelope(obj) if type(obj) is dict else {}))
    obj = _exactly(obj, raw)
    content = _canonical(obj)
    twice = duplicated(raw, content)
    if twice is not None:
        return _said_twice(obj, raw, *twice)
    kind = obj.get("type") if type(obj) is dict else None
    model = DOORS[door].get(kind) if type(kind) is str else None
    if model is not None:
        try:
            command = model.model_validate(obj)
        except ValidationError:
            pass  # what is wrong is said below, in the contract's order
        else:
            # Every envelope id validated, so the envelope as read is the model's own.
            return Parsed(command=command, content=content, claimed={
                "command_id": obj["command_id"], "type": kind, "business_id": obj["business_id"],
                "agent_id": obj.get("agent_id"), "conversation_id": obj.get("conversation_id"),
                "turn_id": obj.get("turn_id"), "facts": obj.get("facts")})
    return _not_parsed(obj, raw, door)


def _said_twice(obj: Any, raw: bytes, keys: list[str], outermost: list[str]) -> Rejection:
    """A key twice in one object is malformed, on every door: an envelope id given twice is
    unreadable (null), as it says two things; the rest of the envelope is shown as read."""
    envelope = _envelope(obj) if type(obj) is dict else {}
    envelope.update((k, None) for k in outermost if k in envelope)
    more = f" (+{len(keys) - 1} more)" if len(keys) > 1 else ""
    return Rejection(error=excerpt(f"duplicate key {keys[0]!r} in a JSON object{more}"), raw=excerpt(raw), **envelope)


def _deeper_than(raw: bytes, obj: Any, depth_max: int) -> bool:
    """Whether objects and arrays nest more than `depth_max` deep: the standard library's
    reader and writer recurse, and give up near 1,000 (an exception, not an answer). Fewer
    brackets than the limit cannot nest past it; else each level is walked once."""
    if raw.count(b"{") + raw.count(b"[") <= depth_max:
        return False
    level, depth = [obj], 0
    while level:
        depth += 1
        if depth > depth_max:
            return True
        level = [v for c in level for v in (c.values() if type(c) is dict else c) if type(v) in _CONTAINERS]
    return False


_CONTAINERS = (dict, list)


def _envelope(obj: dict[str, Any]) -> dict[str, Any]:
    """The envelope's ids as an outcome may show them (null where unreadable)."""
    kind = obj.get("type")
    return dict(
        command_id=_id(obj, "command_id"),
        # a string first: a list or object `type` is unreadable, not a crash
        type=kind if isinstance(kind, str) and kind in COMMAND_TYPES else None,
        business_id=_id(obj, "business_id"),
        agent_id=_id(obj, "agent_id"),
        conversation_id=_id(obj, "conversation_id"),
        turn_id=_id(obj, "turn_id"))


def _not_parsed(obj: Any, raw: bytes, door: str) -> Rejection | NotPermitted:
    """Why a readable JSON document is not a command this door takes, in the contract's order:
    readability first, then the door, then the rest of the shape."""
    if not isinstance(obj, dict):
        return Rejection(error=f"expected a JSON object, got {type(obj).__name__}", raw=excerpt(raw))
    envelope = _envelope(obj)
    unreadable = [k for k in ("command_id", "type", "business_id") if envelope[k] is None]
    if unreadable:
        return Rejection(error=f"unreadable {', '.join(unreadable)}", raw=excerpt(raw), **envelope)
    if envelope["type"] not in DOORS[door]:
        return NotPermitted(**envelope, claimed={**envelope, "facts": readable_facts(obj.get("facts"))},
                            details={"why": WRONG_DOOR[door]})
    try:
        DOORS[door][envelope["type"]].model_validate(obj)
    except ValidationError as exc:
        return Rejection(error=first_error(exc), raw=excerpt(raw), **envelope)
    raise AssertionError("a command parse validated on its second reading")  # model_validate is deterministic
