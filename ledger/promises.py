"""The promise backstop: does a reply promise that a person will follow up?

Deliberately over-broad: a false positive costs a person ten seconds, a false negative
strands a customer. The phrases are data (promises.txt); matching is on normalised text.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from importlib import resources

# Straight, curly, modifier-letter, backtick, acute, prime: all typed as apostrophes in chat.
_APOSTROPHES = dict.fromkeys(map(ord, "\u2018\u2019\u02bc\u0060\u00b4\u2032"), "'")


def normalise(text: str) -> str:
    """Lower case, apostrophes dropped, punctuation and spacing folded to one space.

    Dropped, not expanded: "I'll" becomes "ill", and the phrase list carries "will" forms
    beside the contracted ones. Expanding would guess ("he'd": had or would?).
    """
    text = unicodedata.normalize("NFKC", text).translate(_APOSTROPHES).lower()
    text = text.replace("'", "")
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


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
