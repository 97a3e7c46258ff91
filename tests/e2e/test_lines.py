"""Reading lines (CONTRACT 11, size): linear, and a line over 1 MiB never held whole."""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from commands.limits import line_bytes_max, raw_excerpt_bytes_max
from commands.parsing import Oversized
from consumers.cli.common import batches, read_chunk_bytes
from tests.builders import command, known


def read_all(tmp_path, data: bytes) -> list:
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    with open(path, "rb") as f:
        return [line for batch in batches(f) for line in batch]


def test_lines_split_over_reads_come_back_whole(tmp_path):
    rng = random.Random(7)
    lines = [bytes([65 + i % 26]) * rng.choice([1, 100, read_chunk_bytes - 1, read_chunk_bytes, 3 * read_chunk_bytes + 5])
             for i in range(60)]

    assert read_all(tmp_path, b"\n".join(lines) + b"\n") == lines


def test_blank_lines_are_skipped_crlf_is_trimmed_and_a_last_line_needs_no_newline(tmp_path):
    assert read_all(tmp_path, b"a\r\n\n  \r\nb\nc") == [b"a", b"b", b"c"]


def test_a_line_of_exactly_the_limit_is_read_and_one_byte_more_is_oversized(tmp_path):
    at_limit, over = b"x" * line_bytes_max, b"y" * (line_bytes_max + 1)

    read = read_all(tmp_path, at_limit + b"\n" + over + b"\nz\n")

    assert read[0] == at_limit and read[2] == b"z"
    assert read[1] == Oversized(b"y" * raw_excerpt_bytes_max, line_bytes_max + 1)


def test_an_oversized_last_line_without_newline_is_oversized(tmp_path):
    [read] = read_all(tmp_path, b"{" + b"q" * (3 * line_bytes_max))
    assert isinstance(read, Oversized) and read.head == (b"{" + b"q" * raw_excerpt_bytes_max)[:raw_excerpt_bytes_max]


def escalation(command_id: str, reason: str = "help") -> dict:
    return command("Escalate", {"reason": known(reason, "message")}, command_id=command_id)


def test_ledger_process_rejects_an_oversized_line_and_answers_its_neighbours(db_url, tmp_path):
    huge = json.dumps(escalation("huge", "r" * (2 * line_bytes_max)))
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join([json.dumps(escalation("before")), huge, json.dumps(escalation("after"))]) + "\n")

    done = subprocess.run([os.path.join(os.path.dirname(sys.executable), "ledger"), "process", str(path),
                           "--db", db_url], capture_output=True, timeout=120)

    assert done.returncode == 0, done.stderr
    outcomes = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(o["command_id"], o["status"], o["reason"]) for o in outcomes] == [
        ("before", "accepted", None), (None, "rejected", "malformed"), ("after", "accepted", None)]


@pytest.mark.parametrize("size", [line_bytes_max + 1, 5 * line_bytes_max])
def test_a_message_over_the_limit_is_rejected_unread(size):
    from commands.parsing import Rejection, parse
    rejection = parse(b"{" + b" " * (size - 2) + b"}", "agent")
    assert isinstance(rejection, Rejection) and rejection.command_id is None
    assert len(rejection.raw.encode()) <= raw_excerpt_bytes_max


def test_a_producer_that_waits_for_each_answer_gets_it_before_sending_the_next(tmp_path):
    db = f"sqlite:///{tmp_path}/ledger.db"
    process = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "ledger"), "process", "-", "--db", db],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for i in range(3):
            process.stdin.write(json.dumps(escalation(f"step-{i}")).encode() + b"\n")
            process.stdin.flush()
            assert json.loads(process.stdout.readline())["command_id"] == f"step-{i}"
        process.stdin.close()
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
