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

from commands.invisible import has_invisible

# Straight, curly, modifier-letter, backtick, acute, prime: all typed as apostrophes in chat,
# and all dropped.
_APOSTROPHES = frozenset("'\u2018\u2019\u02bc\u0060\u00b4\u2032")
# Letterlike symbols that neither NFKC, their names nor TR39 take to a letter.
_LETTERLIKE = {"\u212e": "e", "\u2118": "p", "\u2132": "f", "\u214e": "f"}


@lru_cache(maxsize=1)
def _confusables() -> dict[str, list[dict[str, str]]]:
    """Unicode TR39 confusables (confusables.txt), as confusable-homoglyphs ships them:
    character -> the characters it can be mistaken for. Read once, on the first reply that
    is not plain ASCII, as JSON through orjson: importing the library's own module costs far more."""
    data = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_bytes()
    table: dict[str, list[dict[str, str]]] = orjson.loads(data)
    return table


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


# Blanks that are neither spaces nor nothing: a braille blank and the Hangul fillers show as
# an empty cell in some fonts and as nothing in others. Folded to this one mark, a reply is
# read both ways (`readings`).
_BLANK = "\u2800"
_BLANKS = frozenset("\u2800\u3164\u115f\u1160\uffa0")
# A letter Unicode names as a Latin (or regional indicator) letter in some dress: small
# capitals (ᴄᴀʟʟ), parenthesized, negative squared and circled letters, script and dotless
# forms. NFKC leaves these as they are, or makes them letters with punctuation around.
_LETTER_NAME = re.compile(r"(?:LATIN|REGIONAL INDICATOR).*\b(?:LETTER|CAPITAL)(?: SCRIPT| DOTLESS)? ([A-Z])$")


def _unseen(char: str) -> bool:
    """Nothing a person sees on its own: invisible (commands/invisible.py: format characters,
    variation selectors, every default-ignorable) or a mark on the letter before it (accents,
    the enclosing circle U+20DD)."""
    return has_invisible(char) or unicodedata.category(char)[0] == "M"


def _fold_one(char: str) -> str:
    """One character of NFKC's output as a person reads it."""
    if char in _BLANKS:
        return _BLANK
    if _unseen(char):
        return ""
    named = _LETTER_NAME.search(unicodedata.name(char, "")) if not char.isascii() else None
    if named:
        return named.group(1).lower()
    out = []
    for c in unicodedata.normalize("NFD", char.casefold()):
        if _unseen(c):
            continue
        if not c.isascii() and c.isalpha():
            c = _latin_skeleton(c) or c
        out.append(c)
    return "".join(out)


def _fold_char(char: str) -> str:
    """One character as a person reads it: nothing if unseen, case folded, accents dropped, a
    styled or look-alike letter as its Latin one. Its name first (NFKC makes a parenthesized
    letter three characters), then NFKC (full-width and styled letters become plain ones)."""
    if char in _APOSTROPHES or (char not in _BLANKS and _unseen(char)):
        return ""  # before its name: a tag letter (U+E0041) is named as a Latin one
    if char in _LETTERLIKE:
        return _LETTERLIKE[char]
    named = _LETTER_NAME.search(unicodedata.name(char, ""))
    if named:
        return named.group(1).lower()
    return "".join(_fold_one(c) for c in unicodedata.normalize("NFKC", char))


class _FoldTable(dict[int, str]):
    """str.translate's table, filled in as characters are met: after the first reply in a
    script, folding it is one C-level pass."""

    def __missing__(self, code: int) -> str:
        self[code] = folded = _fold_char(chr(code))
        return folded


_fold_table = _FoldTable()


def fold(text: str) -> str:
    """Each character folded as a person reads it (`_fold_char`); apostrophes go too."""
    if text.isascii():
        return text.lower().replace("'", "").replace("`", "")
    return text.translate(_fold_table)


def _spaced(folded: str) -> str:
    return " ".join(_PUNCTUATION.sub(" ", folded).split())


_PUNCTUATION = re.compile(r"[\W_]+")


def normalise(text: str) -> str:
    """Folded as a person reads it (apostrophes dropped), punctuation and spacing folded to
    one space; a blank (`_BLANKS`) is a space here.

    Dropped, not expanded: "I'll" becomes "ill", and the phrase list carries "will" forms
    beside the contracted ones. Expanding would guess ("he'd": had or would?).
    """
    return _spaced(fold(text))


def readings(text: str) -> list[str]:
    """The text normalised as a person may read it: a blank as a space, and (when it holds one)
    as nothing."""
    folded = fold(text)
    spaced = _spaced(folded)
    return [spaced, _spaced(folded.replace(_BLANK, ""))] if _BLANK in folded else [spaced]


@lru_cache(maxsize=1)
def phrases() -> tuple[str, ...]:
    lines = resources.files("ledger.core").joinpath("promises.txt").read_text("utf-8").splitlines()
    return tuple(normalise(l) for l in lines if l.strip() and not l.lstrip().startswith("#"))


@lru_cache(maxsize=1)
def _matchers() -> tuple[re.Pattern[str], tuple[tuple[str, str], ...]]:
    """One pattern that finds whether any phrase is there at all (a reply mostly holds none),
    and the phrases padded with the spaces that make them whole words, in the list's order."""
    listed = phrases()
    longest_first = sorted(set(listed), key=len, reverse=True)
    return (re.compile(" (?:" + "|".join(re.escape(p) for p in longest_first) + ") "),
            tuple((f" {phrase} ", phrase) for phrase in listed))


# perf: bench.whatif (every CompleteTurn's reply): 19 -> 12 us a reply with no phrase in it.
def promised_follow_up(reply: str) -> str | None:
    """The first phrase the reply contains, whole words only, in any of its readings, or None."""
    anywhere, padded = _matchers()
    for reading in readings(reply):
        text = f" {reading} "
        if anywhere.search(text) is None:
            continue
        for spaced, phrase in padded:
            if spaced in text:
                return phrase
    return None
