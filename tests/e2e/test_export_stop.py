"""`ledger export --out FILE` stopped by SIGTERM (issue 28 item 4): the temporary file goes,
no FILE appears, and the process exits as one stopped by SIGTERM does (143).

The export is held mid-way without any timing: another connection holds SQLite's write
lock, so the export waits in its projections' catch-up with its temporary file already
open; the signal is sent then, and the lock released after it."""
from __future__ import annotations

import signal
import sqlite3
import subprocess
import time

from ledger.service import Ledger
from ledger.store.database import Store
from tests.builders import UNKNOWN, order
from tests.given import a_shop, agent
from tests.process import LEDGER

appear_wait_s = 60  # a deadline for the temporary file on a loaded machine, not a timing assertion


def test_an_export_stopped_by_sigterm_leaves_no_file_behind(tmp_path):
    path = tmp_path / "ledger.db"
    store = Store(f"sqlite:///{path}")
    store.create_tables()
    a_shop(Ledger(store))
    agent(Ledger(store), order("cust-1", UNKNOWN))  # projections not caught up: the export will write them
    store.close()
    out = tmp_path / "out"
    out.mkdir()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    export = subprocess.Popen([LEDGER, "export", "blocks", "--format", "csv", "--out", str(out / "blocks.csv"),
                               "--db", f"sqlite:///{path}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + appear_wait_s
        while not list(out.iterdir()) and export.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [p.name.endswith(".part") for p in out.iterdir()] == [True]

        export.send_signal(signal.SIGTERM)
        holder.execute("COMMIT")
        status = export.wait(timeout=120)
    finally:
        holder.close()
        if export.poll() is None:
            export.kill()

    assert status == 128 + signal.SIGTERM
    assert list(out.iterdir()) == []
