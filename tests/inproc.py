"""`ledger` run in this process: the whole command line (parser, main, exit status, stdout,
stderr) without a process start each, which on a loaded machine costs seconds a run."""
from __future__ import annotations

import contextlib
import io
import json
import subprocess

from consumers.cli import main


def ledger_main(*argv: str) -> tuple[int, bytes, str]:
    """(exit status, stdout bytes, stderr text) of `ledger ARGV`."""
    out, err = io.BytesIO(), io.StringIO()
    text = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(text), contextlib.redirect_stderr(err):
        try:
            status = main(list(argv))
        except SystemExit as exc:  # argparse's usage errors
            status = exc.code
        text.flush()
    return status, out.getvalue(), err.getvalue()


def ledger_done(*argv: str) -> subprocess.CompletedProcess:
    """`ledger ARGV` answered as `subprocess.run` answers (stdout and stderr bytes), run in this
    process (input from a file: reading stdin is the process's, tests/e2e/test_cli.py)."""
    status, out, err = ledger_main(*argv)
    return subprocess.CompletedProcess(["ledger", *argv], status, out, err.encode())


def jsonl(out: bytes) -> list[dict]:
    return [json.loads(line) for line in out.splitlines()]
