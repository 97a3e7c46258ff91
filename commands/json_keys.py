"""Duplicate keys in a JSON object: a document that says two things is malformed, on every door.

orjson (like most readers) keeps a repeated key's last value without a word, so an envelope
with `business_id` shop-1 and then shop-2 would run in shop-2. `duplicated` proves most
documents clean by counting, in C: each key of the text is followed by exactly one `:`
outside strings, so the text's colons are at least its keys plus the colons inside its
strings; when they equal the keys the reader kept plus the colons in the strings it kept
(the kept document written out again, where every colon is a key's or a string's), no key
was dropped. Only a document that fails that count (a duplicate, or a colon written as the
escape `\\u003a`) is read again with the standard library's per-object hook, which names the keys.
"""
from __future__ import annotations

import json
from typing import Any

_ESCAPED_COLON = b"\\u003"  # the escapes of ":" (and of the digits, ";" to "?": rarely written so)


def duplicated(raw: bytes, written: bytes) -> tuple[list[str], list[str]] | None:
    """None when `raw` holds no object with a key twice; else (every key repeated, innermost
    objects first; those repeated in the outermost object). `written`: the document orjson read
    from `raw`, written out again by any JSON writer that leaves colons unescaped."""
    if raw.count(b":") == written.count(b":") and raw.find(_ESCAPED_COLON) < 0:
        return None
    try:
        found = _named(raw)
    except RecursionError:  # nested past the standard library's reach: not proved clean
        return ["(nested too deep to check)"], []
    return found if found[0] else None


def _named(raw: bytes) -> tuple[list[str], list[str]]:
    repeated: list[str] = []
    outermost: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        outermost.clear()  # the hook runs innermost first: the last call is the outermost object
        for key, _ in items:
            if key in seen:
                repeated.append(key)
                outermost.append(key)
            seen.add(key)
        return dict(items)

    json.loads(raw, object_pairs_hook=pairs)
    return repeated, outermost
