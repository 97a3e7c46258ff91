"""The README's `ledger web` steps, run as written after `make demo`'s own command: they lead
to a blocked order waiting for the owner, with its Approve button."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path

from tests.process import LEDGER, ledger_run
from tests.e2e.test_web import bearer, exchange
from tests.web_support import _announced

ROOT = Path(__file__).resolve().parents[2]
README_LISTEN = "127.0.0.1:8080"


def readme_web_steps() -> list[str]:
    """The indented shell lines after "After `make demo`", up to the first comment-only line."""
    text = (ROOT / "README.md").read_text()
    block = text.split("After `make demo` (its shop", 1)[1].split("\n\n", 2)[1]
    return [line.strip() for line in block.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_the_readme_web_steps_lead_to_an_order_to_approve(tmp_path):
    assert ledger_run("demo", "--db", "sqlite:///demo.db", cwd=tmp_path).returncode == 0  # make demo's command
    install, add_owner, serve = readme_web_steps()
    assert install.startswith(".venv/bin/uv pip install") and "'.[web]'" in install  # this venv has every extra
    bin_dir = str(Path(LEDGER).parent)
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")},
           "PATH": bin_dir + os.pathsep + os.environ["PATH"]}
    added = subprocess.run(["bash", "-c", add_owner.replace(".venv/bin/ledger", LEDGER)], cwd=tmp_path, env=env,
                           capture_output=True, timeout=120)
    assert added.returncode == 0, added.stderr.decode()
    token = json.loads(added.stdout)["token"]
    # The one change: a free port in place of the README's 8080, so tests can run side by side.
    script = f"exec {serve.replace('.venv/bin/ledger', LEDGER).replace(README_LISTEN, '127.0.0.1:0')}"
    proc = subprocess.Popen(["bash", "-c", script], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        base = _announced(proc)
        [(status, queue)] = exchange(base, ("GET", "/", bearer(token), None))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)

    assert status == 200
    cards = re.findall(r'<article class="item open".*?</article>', queue, re.S)
    assert any("Credit limit exceeded" in card and ">Approve order</button>" in card for card in cards)

