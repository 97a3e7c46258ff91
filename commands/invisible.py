"""Characters a person cannot see, named once for the ids (commands/models.py) and the promise
backstop (ledger/core/promises.py).

Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt: zero-width spaces and
joiners, soft hyphen, variation selectors, the combining grapheme joiner, Hangul fillers,
Khmer inherent vowels, Mongolian free variation selectors, tags) together with every format
character (category Cf: bidirectional controls and isolates, BOM, invisible operators,
prepended number marks). Python's unicodedata knows categories but not that property, so
the ranges are written out; tests/unit/test_invisible.py holds them to every Cf code point
Python knows.
"""
from __future__ import annotations

import re

# (first, last) code points, inclusive, in order.
INVISIBLE_RANGES: tuple[tuple[int, int], ...] = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x0600, 0x0605), (0x061C, 0x061C), (0x06DD, 0x06DD),
    (0x070F, 0x070F), (0x0890, 0x0891), (0x08E2, 0x08E2), (0x115F, 0x1160), (0x17B4, 0x17B5),
    (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164),
    (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFFB), (0x110BD, 0x110BD),
    (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)


def _escape(code: int) -> str:
    """One code point as a regex escape both Python's `re` and pydantic-core's Rust engine read."""
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


# The ranges as the inside of a regex character class, e.g. for `[^...]`.
INVISIBLE_CLASS = "".join(_escape(a) if a == b else f"{_escape(a)}-{_escape(b)}" for a, b in INVISIBLE_RANGES)
_invisible = re.compile(f"[{INVISIBLE_CLASS}]")


def has_invisible(text: str) -> bool:
    return _invisible.search(text) is not None
