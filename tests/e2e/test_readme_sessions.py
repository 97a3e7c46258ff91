"""The README's Kafka and MCP sessions run as written: their shell blocks, read from README.md
and run literally by bash (the README's commands in order, its agent ids), in a fresh folder
(so a fresh database; `examples` linked in) with `.venv/bin` first on PATH, as `.venv` active.

The one stand-in: terminal 1's `make broker` (`ledger dev broker` on localhost:9092) is the
same broker on a free port, named by LEDGER_KAFKA_BOOTSTRAP, which `serve` and `submit` read
when given no address: tests run side by side."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text("utf-8")


def block(heading: str) -> str:
    """The first ```sh block of the README section under `heading`."""
    section = README[README.index(f"\n## {heading}"):]
    section = section[:section.index("\n## ", 4)]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def env(**more: str) -> dict:
    base = {k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")}
    return {**base, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{base['PATH']}", **more}


def folder(tmp_path: Path) -> Path:
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    return tmp_path


def bash(script: str, cwd: Path, environment: dict, timeout: int = 180) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=timeout)


def outcomes(stdout: str) -> list[dict]:
    return [o for o in map(json.loads, (l for l in stdout.splitlines() if l.startswith("{"))) if "status" in o]


def test_the_mcp_session_runs_as_written(tmp_path):
    done = bash(block("Use the ledger from Claude Desktop / any MCP client"), folder(tmp_path), env())

    assert done.returncode == 0, done.stderr
    runs = done.stdout.split("tools: ")[1:]
    assert len(runs) == 2  # over stdio, then over HTTP
    assert "place_order: accepted" in runs[0] and "issue_payment_link: accepted" in runs[0]
    assert "NGN 900.00" in runs[0]
    assert runs[1].count("(duplicate: the first outcome again") == 3  # two orders' calls and the link
    assert "not_permitted" not in done.stdout and "unauthenticated" not in done.stdout


@pytest.mark.kafka
def test_the_kafka_session_runs_as_written(tmp_path):
    broker = pytest.importorskip("tests.broker")
    lines = block("Kafka: `ledger serve`, `ledger submit`, `LedgerClient`").splitlines()
    assert lines[0].startswith("make broker ")  # terminal 1: stood in for below
    serve_line = lines[1]
    assert serve_line.startswith("ledger serve ")
    terminal_3 = "\n".join(lines[2:])
    cwd = folder(tmp_path)
    with broker.running_broker(str(tmp_path / "broker.log")) as bootstrap:
        environment = env(LEDGER_KAFKA_BOOTSTRAP=bootstrap)
        with open(tmp_path / "serve.log", "wb") as log:
            serve = subprocess.Popen(["bash", "-c", f"exec {serve_line}"], cwd=cwd, env=environment,
                                     stdout=subprocess.DEVNULL, stderr=log)
        try:
            deadline = time.monotonic() + 60  # a person waits for "serving ..." in terminal 2
            while b"serving" not in (tmp_path / "serve.log").read_bytes():
                assert time.monotonic() < deadline and serve.poll() is None, (tmp_path / "serve.log").read_text()
                time.sleep(0.1)
            done = bash(terminal_3, cwd, environment)
        finally:
            serve.send_signal(signal.SIGTERM)  # terminal 2: Ctrl-C
            stopped = serve.wait(60)

    assert done.returncode == 0, done.stderr
    answered = {o["command_id"]: o for o in outcomes(done.stdout) if o.get("command_id")}
    assert all(answered[f"demo-own-{n}"]["status"] == "accepted" for n in range(1, 5))
    assert (answered["k1"]["status"], answered["k1"]["currency"]) == ("accepted", "NGN")
    assert (answered["k2"]["status"], answered["k2"]["reason"]) == ("blocked", "unknown_facts")
    events = [json.loads(l) for l in done.stdout.splitlines() if l.startswith('{"position"')]
    assert [e["type"] for e in events if e["type"] == "OrderPlaced"] == ["OrderPlaced"]
    assert stopped == 0
