"""The README shows what the commands print: its sample output is checked against a fresh run."""
from __future__ import annotations

import re
from pathlib import Path

from tests.inproc import ledger_main

README = Path(__file__).resolve().parents[2] / "README.md"
# What differs run to run, of the same length each time: times and time-ordered order ids.
_VARIES = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z|ord-[0-9a-f]{8}-[0-9a-f-]*")


def sample(command: str) -> list[str]:
    """The lines the README shows under `$ COMMAND`, up to its next command."""
    lines = README.read_text("utf-8").splitlines()
    start = lines.index(f"    $ {command}") + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("    ") or lines[i].startswith("    $"))
    return [line[4:] for line in lines[start:end]]


def masked(lines: list[str]) -> list[str]:
    return [_VARIES.sub(lambda m: "#" * len(m.group()), line) for line in lines]


def test_the_readme_audit_blocks_table_is_what_the_demo_prints(tmp_path):
    db = f"sqlite:///{tmp_path}/demo.db"
    assert ledger_main("demo", "--db", db)[0] == 0

    status, out, err = ledger_main("audit", "blocks", "--table", "--db", db)

    assert status == 0, err
    shown = sample("ledger audit blocks --table --db sqlite:///demo.db")
    assert masked(out.decode().splitlines()) == masked(shown)
