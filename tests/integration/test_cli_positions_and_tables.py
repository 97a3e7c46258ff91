"""The read commands on hostile values (issue 28 item 9): a position no database can hold is a
usage error, never a traceback or an operational failure; `--table` shows text from the
log without letting it steer the terminal."""
from __future__ import annotations

import pytest

from tests.builders import command, known
from tests.given import a_shop, agent
from tests.inproc import ledger_main

TOO_BIG = ["9" * 30, "9223372036854775808", "1e22", "²", "9" * 10_000]


@pytest.mark.parametrize("value", TOO_BIG)
@pytest.mark.parametrize("argv", [["events", "--from"], ["events", "--until"], ["replay", "--until"],
                                  ["audit", "blocks", "--since"], ["audit", "orders", "--as-of"],
                                  ["export", "events", "--format", "jsonl", "--since"],
                                  ["export", "orders", "--format", "jsonl", "--until"]])
def test_a_position_past_64_bits_or_not_a_number_is_a_usage_error_on_one_line(argv, value, ledger, db_url):
    a_shop(ledger)

    status, out, err = ledger_main(*argv, value, "--db", db_url)

    assert (status, out) == (2, b"")
    assert "Traceback" not in err and len(err) < 1000


def test_the_largest_position_is_read_as_the_end_of_the_log(ledger, db_url):
    a_shop(ledger)

    status, out, err = ledger_main("events", "--until", str(2**63 - 1), "--db", db_url)

    assert status == 0, err
    assert len(out.splitlines()) == ledger.store.max_position()


HOSTILE = "\x1b[2J\x1b]8;;http://evil.example\x1b\\x\x1b]8;;\x1b\\\x1b]52;c;cm0=\x07\x9b1m\r\nforged\u202eok"


@pytest.mark.parametrize("argv", [["audit", "escalations"], ["audit", "intents"], ["events"]])
def test_table_output_carries_no_escape_control_or_bidi_character_from_the_log(argv, ledger, db_url):
    a_shop(ledger)
    # Ids refuse bidi and control characters (CONTRACT 11); free text and sources carry them to the log.
    agent(ledger, command("Escalate", {"reason": known(HOSTILE, "message\x1b[31m")}, conversation="c-1"))

    status, out, err = ledger_main(*argv, "--table", "--db", db_url)

    assert status == 0, err
    text = out.decode("utf-8")
    assert all(ch.isprintable() for line in text.splitlines() for ch in line)
    assert len(text.splitlines()) == 2 + (1 if argv[0] == "audit" else ledger.store.max_position())


@pytest.mark.parametrize("value", ["a\x00b", "shop-\udcff"])  # a NUL; a byte the shell passed that is not UTF-8
@pytest.mark.parametrize("argv", [["audit", "blocks", "--business"], ["audit", "escalations", "--reason"],
                                  ["audit", "blocks", "--source"], ["events", "--command"],
                                  ["export", "orders", "--format", "jsonl", "--business"]])
def test_a_filter_no_stored_value_can_match_is_a_usage_error_on_both_backends(argv, value, ledger, db_url):
    a_shop(ledger)

    status, out, err = ledger_main(*argv, value, "--db", db_url)

    assert (status, out) == (2, b"")
    assert "Traceback" not in err and "error: argument" in err.strip().splitlines()[-1]
