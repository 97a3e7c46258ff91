"""Log lines on stderr carry text from the log (a reason, a fact's source, an excerpt): none of it
reaches the terminal as a control, in either format, and each message stays on its line."""
from __future__ import annotations

import json
import logging

import pytest

from consumers.cli import logs

HOSTILE = "\x1b[2J\x1b]8;;http://evil.example\x1b\\x\x1b]52;c;cm0=\x07\x9b1m\r\nforged\u202eok\U000e0041\udcff"


def _terminal_safe(line: str) -> bool:
    return all(ch.isprintable() for ch in line)


@pytest.fixture
def logged(capsys):
    def log(log_format: str) -> str:
        logs.configure(log_format)
        logging.getLogger("ledger").warning("refused: %s", HOSTILE)
        return capsys.readouterr().err
    yield log
    logging.getLogger().handlers.clear()


def test_a_text_log_line_spells_every_control_bidi_and_invisible_character_as_its_escape(logged):
    err = logged("text")
    assert err.count("\n") == 1 and _terminal_safe(err.rstrip("\n"))
    assert "\\x1b[2J" in err and "\\u202e" in err and "\\r\\nforged" in err


def test_a_json_log_line_is_inert_on_a_terminal_and_reads_back_as_the_same_message(logged):
    err = logged("json")
    assert err.count("\n") == 1 and _terminal_safe(err.rstrip("\n"))
    message = json.loads(err)["message"]
    assert message.startswith("refused: \x1b[2J") and "\u202e" in message and "\x9b" in message


def test_a_traceback_keeps_its_lines_and_each_is_inert(capsys):
    logs.configure("text")
    try:
        raise ValueError(HOSTILE)
    except ValueError:
        logging.getLogger("ledger").exception("failed")
    err = capsys.readouterr().err
    logging.getLogger().handlers.clear()
    assert "Traceback" in err and all(_terminal_safe(line) for line in err.splitlines())
