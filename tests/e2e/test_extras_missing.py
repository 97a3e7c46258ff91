"""A door whose extra is not installed: the subcommand says which extra in one line and exits 2,
never a traceback; and the ledger alone (`pip install .`, no door's library) runs the demo.

Each case runs `ledger` in a fresh interpreter where the extra's modules are blocked as if they
were not installed (None in sys.modules: their import fails and find_spec finds nothing)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from consumers.cli.extras import EXTRAS, install_command

DOORS = [m for extra in ("kafka", "postgres", "web", "mcp") for m in EXTRAS[extra][1]]


def ledger_without(blocked: list[str], *argv: str, cwd=None) -> subprocess.CompletedProcess:
    probe = ("import sys\n"
             f"sys.modules.update(dict.fromkeys({blocked!r}))\n"
             "from consumers.cli import main\n"
             f"sys.exit(main({list(argv)!r}))\n")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=cwd)


def line(command: str, what: str, extra: str) -> str:
    """The line, with the extra's install command as it reads where the test runs (tmp_path)."""
    return f"{command} needs {what}: {{{extra}}}"


CASES = [
    ("kafka", ["serve"], line("ledger serve", "Kafka support", "kafka")),
    ("kafka", ["submit", "-"], line("ledger submit", "Kafka support", "kafka")),
    ("web", ["serve", "--metrics", "127.0.0.1:0"], line("ledger serve", "HTTP support", "web")),
    ("web", ["web", "--business", "shop-1"], line("ledger web", "HTTP support", "web")),
    ("web", ["webhook", "--sandbox"], line("ledger webhook", "HTTP support", "web")),
    ("web", ["notify", "--webhook", "http://127.0.0.1:1/hook"], line("ledger notify", "HTTP support", "web")),
    ("mcp", ["mcp"], line("ledger mcp", "MCP support", "mcp")),
    ("kafka", ["mcp", "--bootstrap-servers", "127.0.0.1:1"], line("ledger mcp", "Kafka support", "kafka")),
    ("postgres", ["process", "--db", "postgresql://nobody@127.0.0.1:1/none"],
     line("ledger process", "PostgreSQL support", "postgres")),
    ("broker", ["dev", "broker"], line("ledger dev broker", "the development broker", "broker")),
    ("analyst", ["export", "events", "--format", "parquet", "--out", "events.parquet"], line("ledger export", "Parquet support", "analyst")),
]


@pytest.mark.parametrize("extra, argv, expected", CASES, ids=[" ".join(argv) for _, argv, _ in CASES])
def test_a_subcommand_whose_extra_is_missing_names_it_in_one_line_and_exits_2(tmp_path, monkeypatch, extra, argv,
                                                                            expected):
    monkeypatch.chdir(tmp_path)
    expected = expected.format(**{extra: install_command(extra)})
    done = ledger_without(list(EXTRAS[extra][1]), *argv, cwd=tmp_path)

    assert (done.returncode, done.stderr.splitlines(), done.stdout) == (2, [expected], "")
    assert list(tmp_path.iterdir()) == []  # nothing was started or written before the check


def test_the_demo_runs_with_no_doors_library_installed(tmp_path):
    done = ledger_without(DOORS + ["babel"], "demo", "--db", f"sqlite:///{tmp_path}/demo.db")

    assert done.returncode == 0, done.stderr
    assert "The conversation" in done.stdout
