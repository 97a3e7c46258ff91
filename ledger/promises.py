"""The promise backstop: does a reply promise that a person will follow up?

Deliberately over-broad: a false positive costs a person ten seconds, a false negative
strands a customer. The phrases are data (promises.txt); matching is on the text as a
person reads it (docs/backstop.md): what is invisible, accented, full-width or written in
letters of another script that look Latin does not hide a phrase.
"""
from __future__ import annotations

import re
import unicodedata
from collections import deque
from functools import lru_cache
from importlib import resources

import orjson

# Straight, curly, modifier-letter, backtick, acute, prime: all typed as apostrophes in chat,
# and all dropped.
_APOSTROPHES = frozenset("'\u2018\u2019\u02bc\u0060\u00b4\u2032")


@lru_cache(maxsize=1)
def _confusables() -> dict[str, list[dict[str, str]]]:
    """Unicode TR39 confusables (confusables.txt), as confusable-homoglyphs ships them:
    character -> the characters it can be mistaken for. Read once, on the first reply that
    is not plain ASCII, as JSON through orjson: importing the library's own module costs far more."""
    data = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_bytes()
    return orjson.loads(data)


def _latin_skeleton(char: str) -> str | None:
    """The ASCII letter `char` is confusable with, following TR39's pairs (nearest first).

    A lower-case letter whose look-alike is only a small capital (Cyrillic т -> ᴛ) is
    taken by its capital (Т -> T): matching ignores case anyway.
    """
    for start in (char, char.upper()):
        seen, queue = {start}, deque([start])
        while queue:
            for entry in _confusables().get(queue.popleft(), ()):
                other = entry["c"]
                if len(other) != 1 or other in seen:
                    continue
                if other.isascii() and other.isalpha():
                    return other.lower()
                seen.add(other)
                queue.append(other)
    return None


def _fold_char(char: str) -> str:
    """One character as a person reads it: nothing if invisible (format, category Cf),
    case folded, accents dropped, a look-alike letter of another script as its Latin one."""
    if char in _APOSTROPHES or unicodedata.category(char) == "Cf":
        return ""
    out = []
    for c in unicodedata.normalize("NFD", char.casefold()):
        if unicodedata.combining(c):
            continue
        if not c.isascii() and c.isalpha():
            c = _latin_skeleton(c) or c
        out.append(c)
    return "".join(out)


class _FoldTable(dict):
    """str.translate's table, filled in as characters are met: after the first reply in a
    script, folding it is one C-level pass."""

    def __missing__(self, code: int) -> str:
        self[code] = folded = _fold_char(chr(code))
        return folded


_fold_table = _FoldTable()


def fold(text: str) -> str:
    """NFKC (full-width and styled letters become plain ones), then each character folded.

    Apostrophes go too. The acute accent first: NFKC would make it a space and a mark."""
    if text.isascii():
        return text.lower().replace("'", "").replace("`", "")
    return unicodedata.normalize("NFKC", text.replace("\u00b4", "'")).translate(_fold_table)


def normalise(text: str) -> str:
    """Folded as a person reads it (apostrophes dropped), punctuation and spacing folded to
    one space.

    Dropped, not expanded: "I'll" becomes "ill", and the phrase list carries "will" forms
    beside the contracted ones. Expanding would guess ("he'd": had or would?).
    """
    return " ".join(re.sub(r"[\W_]+", " ", fold(text)).split())


@lru_cache(maxsize=1)
def phrases() -> tuple[str, ...]:
    lines = resources.files("ledger").joinpath("promises.txt").read_text("utf-8").splitlines()
    return tuple(normalise(l) for l in lines if l.strip() and not l.lstrip().startswith("#"))


def promised_follow_up(reply: str) -> str | None:
    """The first phrase the reply contains, whole words only, or None."""
    text = f" {normalise(reply)} "
    for phrase in phrases():
        if f" {phrase} " in text:
            return phrase
    return None
