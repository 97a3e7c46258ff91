"""bench.shape counts what issue 14 counts: long modules and functions, the serve loop
class, dialect branches, decide naming orders_read."""
from pathlib import Path

from bench.shape import measure


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _function(name: str, body_lines: int, indent: str = "") -> str:
    body = "".join(f"{indent}    x = {i}\n" for i in range(body_lines))
    return f"{indent}def {name}():\n{body}"


def test_long_modules_and_functions_are_listed_and_short_ones_are_not(tmp_path):
    # given: a 301-line module and a 300-line one; a 41-line method and a 40-line function
    _write(tmp_path, "ledger/long.py", "x = 1\n" * 301)
    _write(tmp_path, "ledger/edge.py", "x = 1\n" * 300)
    _write(tmp_path, "commands/f.py", "class C:\n" + _function("big", 40, "    ") + _function("ok", 39))
    # when
    shape = measure(tmp_path)
    # then
    assert [(s.name, s.lines) for s in shape.modules_over] == [("ledger/long.py", 301)]
    assert [(s.name, s.lines) for s in shape.functions_over] == [("commands/f.py:C.big", 41)]
    assert shape.lines_total == 301 + 300 + 1 + 41 + 40


def test_the_serve_loop_class_is_server_or_else_the_largest_class_in_the_kafka_room(tmp_path):
    # given: no Server; two classes in consumers/kafka, a larger one elsewhere
    _write(tmp_path, "consumers/kafka/loop.py", "class Loop:\n" + "    x = 1\n" * 9 + "class Tiny:\n    x = 1\n")
    _write(tmp_path, "consumers/cli/big.py", "class Big:\n" + "    x = 1\n" * 50)
    shape = measure(tmp_path)
    assert (shape.serve_class.name, shape.serve_class.lines) == ("consumers/kafka/loop.py:Loop", 10)
    assert shape.largest_class.name == "consumers/cli/big.py:Big"
    # when: a class named Server appears
    _write(tmp_path, "consumers/serving.py", "class Server:\n    x = 1\n")
    # then: it is the serve loop class
    assert measure(tmp_path).serve_class.name == "consumers/serving.py:Server"


def test_dialect_branches_and_orders_read_in_decide_are_found(tmp_path):
    # given
    _write(tmp_path, "ledger/core/decide.py", "orders_read = 1\n")
    _write(tmp_path, "ledger/store/sql.py", "if e.dialect.name == 'sqlite' or c.paramstyle: pass\n")
    _write(tmp_path, "projections/rows.py", "x = 1\n")
    # when
    shape = measure(tmp_path)
    # then
    assert [(s.name, s.lines) for s in shape.dialect_modules] == [("ledger/store/sql.py", 2)]
    assert shape.decide_names_orders_read
    _write(tmp_path, "ledger/core/decide.py", "x = 1\n")
    assert not measure(tmp_path).decide_names_orders_read
