"""Kafka without Docker: `ledger dev broker` and the README's Kafka session on it, start to
finish (serve, the catalogue, an agent's token, submit, an outcome, SIGTERM), as a newcomer
would type it."""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.broker import free_port
from tests.kafka_support import LEDGER

pytestmark = pytest.mark.kafka
ROOT = Path(__file__).resolve().parents[2]
start_s_max = 60.0


def started(proc: subprocess.Popen, marker: bytes) -> bytes:
    """Read proc's stderr until `marker` appears; what was read."""
    deadline, seen = time.monotonic() + start_s_max, b""
    while marker not in seen:
        assert time.monotonic() < deadline and proc.poll() is None, seen.decode(errors="replace")
        if select.select([proc.stderr], [], [], 0.2)[0]:
            seen += os.read(proc.stderr.fileno(), 4096)
    return seen


def stop(proc: subprocess.Popen) -> int:
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def test_the_readme_kafka_session_runs_on_the_dev_broker(tmp_path):
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("LEDGER_")},
           "LEDGER_KAFKA_BOOTSTRAP": f"127.0.0.1:{port}", "LEDGER_DB_URL": f"sqlite:///{tmp_path}/shop.db"}
    broker = subprocess.Popen([LEDGER, "dev", "broker", "--listen", f"127.0.0.1:{port}"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    serve = None
    try:
        started(broker, b"ledger dev broker: Kafka on")
        owner = subprocess.run([LEDGER, "owners", "add", "--business", "mama-put-wholesale", "--name", "Mama Put"],
                               env=env, capture_output=True, timeout=120)
        assert owner.returncode == 0, owner.stderr.decode()
        serve = subprocess.Popen([LEDGER, "serve", "--create-topics"], env=env, cwd=tmp_path,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started(serve, b"serving ")
        shop = subprocess.run([LEDGER, "submit", "--admin", "--token", json.loads(owner.stdout)["token"],
                               str(ROOT / "examples" / "shop.jsonl")], env=env, capture_output=True, timeout=120)
        agent = subprocess.run([LEDGER, "agents", "add", "--business", "mama-put-wholesale", "--agent", "bot"],
                               env=env, capture_output=True, timeout=120)
        assert agent.returncode == 0, agent.stderr.decode()
        env["LEDGER_AGENT_TOKEN"] = json.loads(agent.stdout)["token"]
        order = {"command_id": "k1", "type": "PlaceOrder", "business_id": "mama-put-wholesale", "agent_id": "bot",
                 "conversation_id": "c1", "turn_id": "t1", "facts": {
                     "customer_id": {"status": "known", "value": "cust-ada", "source": "session"},
                     "lines": {"status": "known", "value": [{"sku": "rice-50kg", "quantity": 2}], "source": "message"}}}
        placed = subprocess.run([LEDGER, "submit", "--timeout", "30"], input=json.dumps(order).encode(), env=env,
                                capture_output=True, timeout=120)
        served = stop(serve)
    finally:
        if serve is not None and serve.poll() is None:
            serve.kill()
        broker_stopped = stop(broker)

    assert shop.returncode == 0, shop.stderr.decode()
    assert {json.loads(line)["status"] for line in shop.stdout.splitlines()} == {"accepted"}
    assert placed.returncode == 0, placed.stderr.decode()
    assert [(o["command_id"], o["status"]) for o in map(json.loads, placed.stdout.splitlines())] == [("k1", "accepted")]
    assert served == 0
    assert broker_stopped == 0


def test_dev_broker_on_a_bad_address_is_a_usage_error():
    done = subprocess.run([LEDGER, "dev", "broker", "--listen", "nowhere"], capture_output=True, timeout=60)

    assert done.returncode == 2
