"""Where `ledger export` writes (CONTRACT 9, issue 28 item 4): stdout by default and for `-`; a
file appears whole or not at all; never over the ledger's own database; never over an
existing file without --force. A refusal is a usage error that touches nothing."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import UNKNOWN, order
from tests.given import a_shop, agent
from tests.inproc import jsonl, ledger_main

FORMATS = ["csv", "jsonl", "parquet"]


def a_ledger_file(folder: Path) -> tuple[Path, str]:
    """A SQLite ledger with a little trade in it, in WAL mode (so -wal and -shm files exist)."""
    path = folder / "ledger.db"
    store = Store(f"sqlite:///{path}")
    store.create_tables()
    ledger = Ledger(store)
    a_shop(ledger)
    agent(ledger, order("cust-1", UNKNOWN))
    store.close()
    return path, f"sqlite:///{path}"


def a_folder(tmp_path: Path) -> Path:
    """A folder of its own for the export (the SQLite ledger of `db_url` lives in tmp_path)."""
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def contents(folder: Path) -> dict[str, str]:
    """Every file in the folder, by name: its SHA-256."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("how", ["the path", "a symlink", "a hard link", "a relative path", "its -wal",
                                 "its -shm", "its -journal"])
def test_export_never_writes_over_the_ledgers_own_database(how, fmt, tmp_path, monkeypatch):
    path, url = a_ledger_file(tmp_path)
    out = {"the path": str(path), "a symlink": str(tmp_path / "link.db"), "a hard link": str(tmp_path / "hard.db"),
           "a relative path": "ledger.db", "its -wal": f"{path}-wal", "its -shm": f"{path}-shm",
           "its -journal": f"{path}-journal"}[how]
    if how == "a symlink":
        os.symlink(path, out)
    if how == "a hard link":
        os.link(path, out)
    monkeypatch.chdir(tmp_path)
    before = contents(tmp_path)

    for force in ([], ["--force"]):
        status, _, err = ledger_main("export", "events", "--format", fmt, "--out", out, *force, "--db", url)

        assert status == 2, err
        assert "own database" in err
        assert contents(tmp_path) == before


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_existing_file_is_left_alone_without_force_and_replaced_with_it(fmt, ledger, db_url, tmp_path):
    a_shop(ledger)
    folder = a_folder(tmp_path)
    out = folder / f"orders.{fmt}"
    out.write_bytes(b"keep me")

    refused = ledger_main("export", "orders", "--format", fmt, "--out", str(out), "--db", db_url)
    assert refused[0] == 2 and out.read_bytes() == b"keep me"

    forced = ledger_main("export", "orders", "--format", fmt, "--out", str(out), "--force", "--db", db_url)
    assert forced[0] == 0, forced[2]
    assert out.read_bytes() != b"keep me"
    assert sorted(p.name for p in folder.iterdir()) == [f"orders.{fmt}"]  # no temporary file left


@pytest.mark.parametrize("out", [None, "-"])
def test_export_without_out_or_with_a_dash_writes_to_stdout_and_makes_no_file(out, ledger, db_url, tmp_path, monkeypatch):
    a_shop(ledger)
    folder = a_folder(tmp_path)
    monkeypatch.chdir(folder)

    status, printed, err = ledger_main("export", "orders", "--format", "jsonl", *(["--out", out] if out else []),
                                       "--db", db_url)

    assert status == 0, err
    assert [r["business_id"] for r in jsonl(printed)] == [] and list(folder.iterdir()) == []
    status, printed, _ = ledger_main("export", "customers", "--format", "jsonl", "--db", db_url)
    assert [r["customer_id"] for r in jsonl(printed)] == ["cust-1"]


def test_a_parquet_export_to_stdout_is_a_whole_parquet_file(ledger, db_url, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    a_shop(ledger)

    status, printed, err = ledger_main("export", "stock", "--format", "parquet", "--db", db_url)

    assert status == 0, err
    (a_folder(tmp_path) / "stock.parquet").write_bytes(printed)
    assert sorted(pq.read_table(tmp_path / "out" / "stock.parquet").column("sku").to_pylist()) == ["beans", "rice"]


@pytest.mark.parametrize("out", ["missing-folder/x.csv", "a\x00b.csv", "x" * 10_000, "."])
def test_a_path_that_cannot_be_written_is_a_usage_error_that_makes_nothing(out, ledger, db_url, tmp_path, monkeypatch):
    a_shop(ledger)
    folder = a_folder(tmp_path)
    monkeypatch.chdir(folder)

    status, _, err = ledger_main("export", "orders", "--format", "csv", "--out", out, "--db", db_url)

    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and list(folder.iterdir()) == []


def test_an_export_of_a_ledger_that_is_not_there_leaves_no_file(tmp_path):
    out = tmp_path / "events.csv"

    status, _, _ = ledger_main("export", "events", "--format", "csv", "--out", str(out),
                               "--db", f"sqlite:///{tmp_path}/missing.db")

    assert status == 1 and list(tmp_path.iterdir()) == []
