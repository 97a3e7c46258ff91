"""Secrets that are too short to keep anything are refused at start (issue 28, item 9):
`LEDGER_PAYMENT_SECRET` under 32 bytes, or blank, is a usage error that never echoes it."""
from __future__ import annotations

import os

import pytest

from ledger.providers.base import secret_bytes_min
from tests.process import ledger_run


@pytest.mark.parametrize("secret", [" ", "zq", "zqx" * 10, " " * 40], ids=["blank", "one", "31", "spaces"])
@pytest.mark.parametrize("argv", [["webhook", "--listen", "127.0.0.1:0"], ["process", "-"]], ids=["webhook", "process"])
def test_a_short_or_blank_payment_secret_is_a_usage_error_before_anything_starts(tmp_path, secret, argv):
    db = tmp_path / "ledger.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_PAYMENT")}

    done = ledger_run(*argv, "--db", f"sqlite:///{db}", env={**env, "LEDGER_PAYMENT_SECRET": secret})

    assert done.returncode == 2 and b"LEDGER_PAYMENT_SECRET" in done.stderr and b"at least 32 bytes" in done.stderr
    assert secret.strip() == "" or secret.encode() not in done.stderr


def test_a_payment_secret_of_32_bytes_is_taken(tmp_path):
    done = ledger_run("process", "-", "--db", f"sqlite:///{tmp_path}/ledger.db",
                      env={"LEDGER_PAYMENT_SECRET": "s" * secret_bytes_min})

    assert done.returncode == 0, done.stderr
