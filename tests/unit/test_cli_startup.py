"""Start-up: every `ledger` run builds the whole parser, so registering the subcommands must
load none of the heavy stacks; a subcommand loads only what it runs on."""
from __future__ import annotations

import subprocess
import sys

HEAVY = ("aiohttp", "aiokafka", "playwright", "sqlalchemy", "eventsourcing", "consumers.projecting", "pydantic")


def loaded_after(code: str) -> list[str]:
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stderr.splitlines()[-1].split()


def test_building_the_parser_loads_no_database_http_or_kafka_stack_nor_the_command_models():
    assert loaded_after("from consumers.cli import parser; parser()") == []


def test_the_tools_subcommand_offers_the_formats_the_definitions_know():
    from commands.tools import FORMATS
    from consumers.cli import tools

    assert tools.FORMATS == FORMATS


def test_a_query_loads_the_database_but_no_http_or_kafka_stack_nor_the_projections(tmp_path):
    url = f"sqlite:///{tmp_path}/ledger.db"
    from ledger.store.database import Store
    Store(url).create_tables()  # a read needs a ledger to read
    run = f"from consumers.cli import main; main(['query', 'price', '--business', 'b', '--sku', 's', '--db', {url!r}])"
    assert loaded_after(run) == ["sqlalchemy", "eventsourcing"]
