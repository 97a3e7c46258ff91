"""`ledger` as a user runs it: the installed command, a process of its own (tests/e2e/)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.builders import raw
from tests.inproc import jsonl

__all__ = ["LEDGER", "jsonl", "ledger_run", "lines_of"]

LEDGER = str(Path(sys.executable).with_name("ledger"))


def ledger_run(*argv: str, stdin: bytes = b"", cwd: Path | None = None,
               env: dict | None = None) -> subprocess.CompletedProcess:
    """`ledger ARGV` in a process, without the caller's LEDGER_DB_URL: every test names its --db."""
    base = {k: v for k, v in os.environ.items() if k != "LEDGER_DB_URL"}
    return subprocess.run([LEDGER, *argv], input=stdin, capture_output=True, cwd=cwd, env={**base, **(env or {})},
                          timeout=120)


def lines_of(*commands: dict) -> bytes:
    """Commands as a JSON Lines input."""
    return b"".join(raw(c) + b"\n" for c in commands)
