"""Invisible characters (commands/invisible.py) are named once, and the id rule's two readers
(pydantic-core's regex for commands, `is_id` for envelopes and everything else) agree on them."""
from __future__ import annotations

import sys
import unicodedata

from pydantic import TypeAdapter, ValidationError

from commands.invisible import INVISIBLE_RANGES, has_invisible
from commands.values import Id, is_id

# Default_Ignorable_Code_Point outside category Cf (DerivedCoreProperties.txt), by hand.
IGNORABLE_NOT_FORMAT = [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180C, 0x180D, 0x180F, 0x3164,
                        *range(0xFE00, 0xFE10), 0xFFA0, *range(0xE0100, 0xE01F0)]


def _id_by_pydantic(value: str) -> bool:
    try:
        TypeAdapter(Id).validate_python(value)
    except ValidationError:
        return False
    return True


def test_every_format_character_python_knows_is_invisible():
    format_chars = [c for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"]
    assert [hex(c) for c in format_chars if not has_invisible(chr(c))] == []


def test_default_ignorables_outside_format_are_invisible():
    assert [hex(c) for c in IGNORABLE_NOT_FORMAT if not has_invisible(chr(c))] == []


def test_visible_neighbours_of_the_ranges_are_not_invisible():
    edges = {c for a, b in INVISIBLE_RANGES for c in (a - 1, b + 1)} - {c for a, b in INVISIBLE_RANGES
                                                                       for c in range(a, b + 1)}
    assert [hex(c) for c in sorted(edges) if has_invisible(chr(c))] == []


def test_both_readers_of_the_id_rule_agree_around_every_invisible_range():
    codes = {c for a, b in INVISIBLE_RANGES for c in (a - 1, a, b, b + 1)} | set(range(0x00, 0x3000))
    disagree = [hex(c) for c in sorted(codes) if not 0xD800 <= c <= 0xDFFF
                and _id_by_pydantic(f"a{chr(c)}") != is_id(f"a{chr(c)}")]
    assert disagree == []
