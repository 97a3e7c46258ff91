"""`--table` (CONTRACT 9): no cut without a mark, and nothing in a cell steers the terminal."""
from __future__ import annotations

import pytest

from consumers.cli.table import describe, print_table

HOSTILE = {
    "ESC colour": "\x1b[31mred\x1b[0m",
    "OSC 8 link": "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
    "OSC 52 clipboard": "\x1b]52;c;cm0gLXJmIH4=\x07",
    "C1 CSI": "\x9b2J",
    "CR over the line": "ok\rFORGED",
    "LF into a new row": "a\nposition  forged",
    "bidi override": "abc\u202edcba",
    "bidi isolate": "\u2066x\u2069",
    "NUL": "a\x00b",
    "lone surrogate": "a\ud800b",
    "line separator": "a\u2028b",
    "zero width": "shop-1\u200b",
}


def printed(capsys, rows, columns=None, currencies=None) -> str:
    print_table(rows, columns, currencies)
    return capsys.readouterr().out


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize("where", ["cut column", "last column", "inside a dict"])
def test_no_cell_reaches_the_terminal_with_a_control_bidi_or_invisible_character(capsys, text, where):
    row = {"a": text, "b": "end"} if where == "cut column" else {
        "a": "x", "b": text if where == "last column" else {"reason": text}}

    out = printed(capsys, [row])

    body = out.split("\n")[2:-1]  # the row's line: the header, the rule, the row, then the final newline
    assert len(body) == 1
    assert all(ch.isprintable() for ch in body[0]), repr(body[0])
    out.encode("utf-8")  # a lone surrogate would not encode: the terminal gets valid UTF-8


def test_a_control_character_is_shown_as_its_escape(capsys):
    out = printed(capsys, [{"reason": "\x1b[2J\u202e"}])

    assert out.splitlines()[2] == "\\x1b[2J\\u202e"


def test_a_value_cut_to_its_column_ends_in_the_cut_mark(capsys):
    out = printed(capsys, [{"details": {"credit_limit": 250000, "exposure": 90000, "order_total": 183000}, "end": "."}],
                  currencies={None: "NGN"})

    cell = out.splitlines()[2].split("  ")[0]
    assert cell.endswith("…") and len(cell) == 40
    assert cell.startswith("credit_limit=NGN 2,500.00,exposure=NGN")


def test_a_value_that_fits_is_shown_whole_without_a_mark(capsys):
    out = printed(capsys, [{"a": "x" * 40, "b": "."}])

    assert out.splitlines()[2].split("  ")[0] == "x" * 40


def test_a_longer_value_after_the_measured_rows_is_cut_with_a_mark_too(capsys):
    rows = [{"a": "short", "b": "."}] * 1000 + [{"a": "much longer than short", "b": "."}]

    last = printed(capsys, rows).splitlines()[-1]

    assert last.split("  ")[0] == "much…"


def test_the_last_column_is_printed_whole(capsys):
    out = printed(capsys, [{"a": "x", "b": "y" * 10_000}])

    assert out.splitlines()[2].endswith("y" * 10_000)


@pytest.mark.parametrize("text", HOSTILE.values(), ids=HOSTILE.keys())
def test_an_outcome_line_for_people_carries_no_control_bidi_or_invisible_character(text):
    outcome = {"command_id": text, "type": "PlaceOrder", "status": "blocked", "reason": "conflicting_facts",
               "conflicts": {"lines": [text, "b"]}, "details": {"error": text}}

    lines = describe(outcome).split("\n")

    assert len(lines) == 2 and all(ch.isprintable() for line in lines for ch in line)
