"""A newcomer's and an operator's first runs of `ledger`: the version, a bad database URL, a
closed pipe, log levels and formats, tables, and the demo as an installed package would run it."""
from __future__ import annotations

import json
import logging
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from consumers.cli import logs
from tests.builders import product
from tests.process import LEDGER, ledger_run, lines_of

ROOT = Path(__file__).resolve().parents[2]


def a_log_of(ledger, count: int) -> None:
    ledger.handle([json.dumps(product(f"sku-{n}", 100, 1, command_id=f"p-{n}")) for n in range(count)], "owner")


def test_version_prints_the_installed_version_and_exits_0():
    done = ledger_run("--version")

    assert done.returncode == 0
    assert done.stdout.decode().split() == ["ledger", "0.1.0"]


@pytest.mark.parametrize("url", ["mysql://x", "garbage", "postgresql+psycopg2://u@h/d", "://", "sqlite+aiosqlite:///x"])
def test_a_database_url_the_ledger_cannot_use_is_a_usage_error_on_one_line(url, tmp_path):
    done = ledger_run("events", "--db", url, cwd=tmp_path)

    assert done.returncode == 2
    assert len(done.stderr.decode().strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_a_reader_that_stops_early_ends_the_output_quietly(ledger, db_url):
    a_log_of(ledger, 3000)  # more than a pipe's buffer holds
    proc = subprocess.Popen([LEDGER, "events", "--db", db_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    stderr = proc.stderr.read()
    proc.wait(120)

    assert json.loads(first)["position"] == 1
    assert proc.returncode in (0, 141)
    assert stderr == b""


def test_events_table_prints_a_header_and_one_row_an_event(ledger, db_url):
    a_log_of(ledger, 3)

    done = ledger_run("events", "--table", "--db", db_url)

    assert done.returncode == 0, done.stderr.decode()
    header, rule, *rows = done.stdout.decode().splitlines()
    assert header.split() == ["position", "type", "business_id", "command_id", "recorded_at", "fields"]
    assert [r.split()[:4] for r in rows] == [[str(n + 1), "ProductRegistered", "shop-1", f"p-{n}"] for n in range(3)]
    assert "sku=sku-2" in rows[2]


@pytest.mark.parametrize("level", ["verbose", "DEBUG", "Info", "warn", "quiet", "10", ""])
def test_log_levels_are_read_in_any_case_and_by_their_common_names(level, db_url):
    done = ledger_run("admin", "apply", "--db", db_url, stdin=lines_of(product("rice", 1, 1)),
                      env={"LEDGER_LOG_LEVEL": level})

    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["status"] == "accepted"


@pytest.mark.parametrize("env, argv", [({"LEDGER_LOG_LEVEL": "loud"}, []), ({"LEDGER_LOG_FORMAT": "xml"}, []),
                                       ({}, ["--log-format", "xml"])])
def test_an_unknown_log_level_or_format_is_a_usage_error(env, argv, tmp_path):
    done = ledger_run("admin", "apply", *argv, "--db", f"sqlite:///{tmp_path}/l.db", stdin=b"", env=env)

    assert done.returncode == 2
    assert b"Traceback" not in done.stderr


def test_json_logs_are_one_object_a_line_with_time_level_logger_and_message(capsys):
    logs.configure("json")
    try:
        logging.getLogger("ledger.test").warning("partitions assigned: %s", "ledger.commands/0")
        try:
            raise ValueError("broker away\nsecond line")
        except ValueError:
            logging.getLogger("ledger.test").exception("polling failed")
    finally:
        logs.configure("text")

    first, second = map(json.loads, capsys.readouterr().err.splitlines())
    assert {k: first[k] for k in ("level", "logger", "message")} == {
        "level": "warning", "logger": "ledger.test", "message": "partitions assigned: ledger.commands/0"}
    assert first["time"].endswith("Z")
    assert second["error"] == "ValueError: broker away"


def test_log_format_may_follow_the_subcommand(db_url):
    done = ledger_run("admin", "apply", "--log-format", "json", "--db", db_url, stdin=lines_of(product("rice", 1, 1)),
                      env={"LEDGER_LOG_LEVEL": "debug"})

    assert done.returncode == 0, done.stderr.decode()
    assert all(json.loads(line)["level"] for line in done.stderr.decode().splitlines())


def test_the_demo_data_ships_inside_the_package(tmp_path):
    """What `pip install .` then `ledger demo` needs: the wheel holds the demo's script and the currency table."""
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
                          capture_output=True, timeout=600)
    assert done.returncode == 0, done.stderr.decode()
    [wheel] = tmp_path.glob("agent_order_ledger-*.whl")

    names = zipfile.ZipFile(wheel).namelist()
    assert {"consumers/demo_data/shop.jsonl", "consumers/demo_data/conversation.jsonl",
            "commands/currencies.txt"} <= set(names)
    assert b"deprecated" not in done.stderr.lower()


def test_the_demo_runs_from_any_folder_on_its_shipped_script(tmp_path):
    done = ledger_run("demo", "--db", f"sqlite:///{tmp_path}/demo.db", cwd=tmp_path)

    assert done.returncode == 0, done.stderr.decode()
    assert "The conversation" in done.stdout.decode()


@pytest.mark.postgres
@pytest.mark.parametrize("scheme", ["postgres://", "postgresql://"])
def test_the_plain_postgresql_schemes_use_the_driver_we_ship(scheme, pg_database):
    url = scheme + pg_database.split("://", 1)[1]

    done = ledger_run("admin", "apply", "--db", url, stdin=lines_of(product(f"rice-{len(scheme)}", 1, 1)))

    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["status"] == "accepted"
