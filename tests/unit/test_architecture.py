"""docs/architecture.md's picture is drawn from the code's imports, and the imports keep to
the layers: commands <- ledger <- projections <- consumers."""
from pathlib import Path

from bench.architecture import cycles, doc_path, edges, impure, render, room, stored, upward

ROOT = Path(__file__).resolve().parents[2]


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_the_stored_picture_is_what_the_generator_draws():
    doc = (ROOT / doc_path).read_text(encoding="utf-8")
    assert stored(doc) == render(edges(ROOT)), "run: python -m bench.architecture --write"


def test_no_import_runs_back_up_the_layers():
    assert upward(edges(ROOT)) == []


def test_an_import_back_up_is_found_wherever_it_is_written(tmp_path):
    # given: ledger imports projections inside a function, relatively; projections imports ledger
    _write(tmp_path, "ledger/__init__.py", "")
    _write(tmp_path, "ledger/service.py", "def f():\n    from ..projections import rows\n")
    _write(tmp_path, "projections/__init__.py", "")
    _write(tmp_path, "projections/rows.py", "from ledger.service import f\n")
    # when
    found = edges(tmp_path)
    # then
    assert found == {("ledger", "projections"), ("projections", "ledger")}
    assert upward(found) == [("ledger", "projections")]


def test_a_door_package_inside_consumers_is_a_room_of_its_own(tmp_path):
    # given: the CLI imports the kafka package by name from consumers, and a module beside it
    _write(tmp_path, "consumers/__init__.py", "")
    _write(tmp_path, "consumers/follow.py", "")
    _write(tmp_path, "consumers/kafka/__init__.py", "")
    _write(tmp_path, "consumers/kafka/serve.py", "import ledger.service\n")
    _write(tmp_path, "consumers/cli/kafka.py", "from consumers import kafka, follow\n")
    _write(tmp_path, "ledger/service.py", "")
    # when
    found = edges(tmp_path)
    # then
    assert room("consumers/http/web/app.py") == "consumers/http"
    assert found == {("consumers/cli", "consumers/kafka"), ("consumers/cli", "consumers"),
                     ("consumers/kafka", "ledger")}
    assert "consumers_cli --> consumers_kafka" in render(found)


def test_the_core_imports_no_io():
    assert impure(ROOT) == []


def test_a_core_module_importing_the_store_or_an_io_library_is_found(tmp_path):
    # given: a core module that reads the clock, the database and the store
    _write(tmp_path, "ledger/__init__.py", "")
    _write(tmp_path, "ledger/core/__init__.py", "")
    _write(tmp_path, "ledger/store/__init__.py", "")
    _write(tmp_path, "ledger/store/sql.py", "")
    _write(tmp_path, "ledger/core/decide.py",
           "import time\nfrom dataclasses import dataclass\nfrom . import state\n"
           "def f():\n    import sqlalchemy\n    from ledger.store import sql\n")
    _write(tmp_path, "ledger/core/state.py", "")
    # when
    found = impure(tmp_path)
    # then
    assert found == [("ledger/core/decide.py", "ledger.store"),
                     ("ledger/core/decide.py", "sqlalchemy"), ("ledger/core/decide.py", "time")]
    assert upward(edges(tmp_path)) == [("ledger/core", "ledger/store")]


def test_inside_ledger_the_store_may_not_import_the_runtime(tmp_path):
    # given: the store imports the runtime's service; the runtime imports the store and the core
    _write(tmp_path, "ledger/__init__.py", "")
    _write(tmp_path, "ledger/service.py", "from ledger.store import sql\nfrom ledger.core import decide\n")
    _write(tmp_path, "ledger/store/__init__.py", "")
    _write(tmp_path, "ledger/store/sql.py", "from ledger import service\n")
    _write(tmp_path, "ledger/core/__init__.py", "")
    _write(tmp_path, "ledger/core/decide.py", "")
    # when
    found = edges(tmp_path)
    # then
    assert room("ledger/store/sql.py") == "ledger/store" and room("ledger/service.py") == "ledger"
    assert upward(found) == [("ledger/store", "ledger")]


def test_no_rooms_import_one_another_round_a_cycle():
    assert cycles(edges(ROOT)) == []


def test_two_rooms_importing_each_other_are_found(tmp_path):
    # given: the shared consumers module imports the Kafka door, which imports it back
    _write(tmp_path, "consumers/__init__.py", "")
    _write(tmp_path, "consumers/projecting.py", "from consumers.kafka.topics import Topics\n")
    _write(tmp_path, "consumers/kafka/__init__.py", "")
    _write(tmp_path, "consumers/kafka/topics.py", "")
    _write(tmp_path, "consumers/kafka/consumer.py", "from consumers.projecting import Projections\n")
    # when / then
    assert cycles(edges(tmp_path)) == [["consumers", "consumers/kafka"]]


def test_a_cycle_through_three_rooms_is_found(tmp_path):
    # given: the shared runtime imports ops, ops imports the Kafka door, the Kafka door imports the runtime
    _write(tmp_path, "consumers/__init__.py", "")
    _write(tmp_path, "consumers/runtime.py", "from consumers.ops.metrics import Metrics\n")
    _write(tmp_path, "consumers/ops/__init__.py", "")
    _write(tmp_path, "consumers/ops/metrics.py", "from consumers.kafka.outbox import outbox\n")
    _write(tmp_path, "consumers/kafka/__init__.py", "")
    _write(tmp_path, "consumers/kafka/outbox.py", "")
    _write(tmp_path, "consumers/kafka/writer.py", "from consumers.runtime import Runtime\n")
    # when / then: one cycle of three rooms, though no two of them import each other
    assert cycles(edges(tmp_path)) == [["consumers", "consumers/kafka", "consumers/ops"]]
