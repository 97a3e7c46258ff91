"""Every number a `ledger` option takes is checked by the parser (issue 28): 1e22, 25 digits,
5,000 digits, nan and inf are a usage error (exit 2) before any backend is opened, never a
traceback on SQLite and an operational failure on PostgreSQL."""
from __future__ import annotations

import argparse

import pytest

from consumers.cli import _parsers, parser

HOSTILE_NUMBERS = ["1e22", "9" * 25, "9" * 5000, "nan", "inf", "-inf", "1e400", "-1" + "0" * 30, "0x10", "１２"]


def number_options() -> list[tuple[str, str, argparse.Action]]:
    """(subcommand's prog, option, action) for every option whose value is read as a number or a place in the log."""
    found = []
    for p in _parsers(parser()):
        for action in p._actions:
            name = getattr(action.type, "__name__", "")
            if action.option_strings and name in ("int", "float", "position", "since", "until"):
                found.append((p.prog, action.option_strings[-1], action))
    return found


def test_no_option_takes_a_bare_python_number():
    # int and float take 1e22-sized values the code below cannot use: each goes through common.bounded
    bare = [(prog, option) for prog, option, action in number_options() if action.type in (int, float)]
    assert bare == []


def test_the_number_options_are_found():
    assert {"--timeout", "--interval-ms", "--since", "--until", "--as-of", "--partitions"} <= {
        option for _, option, _ in number_options()}


@pytest.mark.parametrize("value", HOSTILE_NUMBERS)
def test_every_number_option_refuses_a_hostile_number_as_a_usage_error(value):
    accepted = []
    for prog, option, action in number_options():
        try:
            action.type(value)
        except argparse.ArgumentTypeError:
            continue
        except Exception as exc:  # anything else is argparse's "invalid value" too, but says less
            accepted.append((prog, option, type(exc).__name__))
        else:
            accepted.append((prog, option, "accepted"))
    assert accepted == []


def test_simulate_sends_any_integer_a_provider_could_and_refuses_what_is_no_integer():
    # `ledger payments simulate` plays the provider, hostile amounts included (the webhook door refuses them)
    from consumers.cli.payments import provider_amount

    assert provider_amount(str(2**64)) == 2**64 and provider_amount("1" + "0" * 30) == 10**30
    for value in ("1e22", "9" * 5000, "nan", "１２"):
        with pytest.raises(argparse.ArgumentTypeError):
            provider_amount(value)
