"""The events' codec: an event to the bytes the log stores, and back.

JSON by orjson (in C, dataclasses natively), exact for integers past 64 bits too (a block's
figures can be: a huge order's total), which orjson refuses to write and reads as floats:
those documents go through the standard library. A replay decodes the whole log, so
decoding takes the short way wherever it is exactly what the long way would do.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from ledger.core.events import Event


def encode(event: Event) -> bytes:
    # The event's own dict: what orjson writes for a dataclass (its fields, in order, none
    # private), without orjson asking the object for its dataclass fields first.
    return dumps(event.__dict__)


# perf: bench.memory: orjson's 4 KB buffer kept per document: 300k small dumps held 1,190 MB, copied 55 MB (docs/bench.md).
def dumps(obj: Any) -> bytes:
    """orjson (in C, dataclasses natively), or the standard library for what orjson refuses:
    integers past 64 bits, as a block's figures can be (a huge order's total). Copied to its
    own length: orjson hands over its 4 KB working buffer however short the JSON, and a
    batch's event states and outcomes are all held until its write."""
    try:
        return bytes(memoryview(orjson.dumps(obj)))
    except orjson.JSONEncodeError:
        plain = obj.to_dict() if isinstance(obj, Event) else obj
        return json.dumps(plain, ensure_ascii=False, separators=(",", ":")).encode()


def decode(topic: str, state: bytes) -> Event:
    return _event(Event.registry[topic], loads(state))


# perf: bench.replay: one long-integer look a page, half a row's `decode`: reading 200k events 0.94 -> 0.50 s CPU (161ab98).
def decode_page(rows: Sequence[tuple[int, str, bytes]]) -> list[tuple[int, Event]]:
    """(position, topic, state) rows to (position, event) pairs, as `decode` makes each, for a
    replay, which decodes the whole log: one look for long integers serves the whole page (it
    rarely holds one), and no call a row is left but the event's."""
    load, registry = _page_loader(rows), Event.registry
    return [(position, _event(registry[topic], load(state))) for position, topic, state in rows]


def decode_page_whole(rows: Sequence[tuple[int, str, bytes]]) -> list[tuple[int, Event, bool]]:
    """As `decode_page`, each event with whether its state held exactly its type's fields (else
    reading filled in a default: a state stored before that field existed), for whoever sends
    the stored bytes as they are (the relay)."""
    load, kinds = _page_loader(rows), _KINDS
    return [(position, _event(kind, data), data.keys() == names)
            for position, topic, state in rows
            for kind, names in (kinds[topic],)
            for data in (load(state),)]


def fields_page(rows: Sequence[tuple[int, str, bytes]]) -> list[tuple[int, type[Event], dict[str, Any]]]:
    """(position, topic, state) rows to (position, event type, fields) triples, the fields
    exactly as `decode`'s event would hold them (`vars(event)`: defaults filled in, an
    unknown or missing field the same TypeError), without the event itself: for a fold that
    reads fields (a replay), one object fewer an event."""
    load, kinds = _page_loader(rows), _KINDS
    return [(position, kind, data if data.keys() == names else vars(kind(**data)))
            for position, topic, state in rows
            for kind, names in (kinds[topic],)
            for data in (load(state),)]


def _page_loader(rows: Sequence[tuple[int, str, bytes]]) -> Callable[[bytes], Any]:
    """The reader for a page's states: one look for long integers serves the whole page (it
    rarely holds one, and orjson would read one past 64 bits as a float)."""
    clean = b" ".join([state for _, _, state in rows]).translate(_DIGITS_AS_ZERO).find(_LONG_DIGITS) < 0
    return orjson.loads if clean else loads


class _Kinds(dict[str, tuple[type[Event], frozenset[str]]]):
    """topic -> (event type, its field names), as `Event.registry` holds them (a KeyError for an unknown topic)."""

    def __missing__(self, topic: str) -> tuple[type[Event], frozenset[str]]:
        cls = Event.registry[topic]
        self[topic] = found = (cls, _field_names(cls))
        return found


_KINDS = _Kinds()


# perf: bench.replay: the decoded dict becomes the event's own, no constructor: decode ~1.5x faster (docs/bench.md, 774f259).
def _event(cls: type[Event], data: dict[str, Any]) -> Event:
    if data.keys() != _field_names(cls):
        return cls(**data)  # defaults to fill in, or a TypeError to raise: the constructor's job
    # Every field present: what the frozen constructor would do, without a setattr call a field,
    # and the decoded dict becomes the event's own rather than copied (frozen forbids setting fields, not this).
    event = object.__new__(cls)
    object.__setattr__(event, "__dict__", data)
    return event


# Every ASCII digit to "0", anything else to " ": a run of 20 digits becomes _LONG_DIGITS.
# Two passes in C (translate, then a substring search): no regex engine on every stored event.
# The search is `find`, not `in`: `bytes in bytes` first tries the needle as one byte's
# value, and raises and clears a TypeError (~2,000 instructions) before it searches.
# perf: bench.replay: a translate and a substring test, ~6x cheaper than a regex (~40% of decoding; docs/bench.md, 5d49196).
_DIGITS_AS_ZERO = bytes(b"0"[0] if chr(i).isdigit() and i < 128 else b" "[0] for i in range(256))
_LONG_DIGITS = b"0" * 20


def loads(raw: bytes) -> Any:
    """The inverse of `dumps`: orjson reads integers past 64 bits as floats, so a document
    that may hold one (a run of 20 digits) is read by the standard library instead."""
    return json.loads(raw) if raw.translate(_DIGITS_AS_ZERO).find(_LONG_DIGITS) >= 0 else orjson.loads(raw)


_FIELD_NAMES: dict[type[Event], frozenset[str]] = {}


def _field_names(cls: type[Event]) -> frozenset[str]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = frozenset(f.name for f in dataclasses.fields(cls))
    return names
