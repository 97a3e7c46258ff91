"""The product's shape, as issue 14 counts it: `python -m bench.shape [--json]`.

Reads the product's packages (commands, ledger, projections, consumers) with `ast`, runs
nothing: modules over 300 lines, functions over 40, the serve loop class's length (`Server`,
or the largest class in consumers/kafka once it has another name), the modules that branch
on the SQL dialect, whether decide.py still names `orders_read`, and the total line count.
Plain text for a person; `--json` for a machine (one object).
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from bench import architecture
from bench.tree import packages, product_files

module_lines_max = 300
function_lines_max = 40
dialect_marks = ("dialect.name", "paramstyle")
serve_class_name = "Server"
serve_room = "consumers/kafka"


@dataclass(frozen=True)
class Span:
    name: str  # path, or path:qualified.name
    lines: int


@dataclass
class Shape:
    modules: int = 0
    lines_total: int = 0
    modules_over: list[Span] = field(default_factory=list)
    functions_over: list[Span] = field(default_factory=list)
    serve_class: Span | None = None
    largest_class: Span | None = None
    dialect_modules: list[Span] = field(default_factory=list)  # lines = mentions
    decide_names_orders_read: bool = False
    rooms: list[str] = field(default_factory=list)  # bench.architecture's: ledger/core, ledger/store, ...
    import_cycles: list[list[str]] = field(default_factory=list)
    imports_back_up: list[list[str]] = field(default_factory=list)
    core_imports_io: list[list[str]] = field(default_factory=list)  # (module, what it imports)


def _spans(tree: ast.AST, prefix: str = "") -> list[tuple[str, ast.AST]]:
    """Every function and class, nested ones too, with its qualified name."""
    found = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{node.name}"
            found.append((name, node))
            found.extend(_spans(node, f"{name}."))
        else:
            found.extend(_spans(node, prefix))
    return found


def _length(node: ast.AST) -> int:
    return node.end_lineno - node.lineno + 1


def _largest(classes: list[Span]) -> Span | None:
    return max(classes, key=lambda span: span.lines, default=None)


def measure(root: Path) -> Shape:
    shape, classes = Shape(), []
    for rel, text in product_files(root):
        lines = len(text.splitlines())
        shape.modules += 1
        shape.lines_total += lines
        if lines > module_lines_max:
            shape.modules_over.append(Span(rel, lines))
        mentions = sum(text.count(mark) for mark in dialect_marks)
        if mentions:
            shape.dialect_modules.append(Span(rel, mentions))
        if rel == "ledger/core/decide.py":
            shape.decide_names_orders_read = "orders_read" in text
        for name, node in _spans(ast.parse(text, rel)):
            span = Span(f"{rel}:{name}", _length(node))
            if isinstance(node, ast.ClassDef):
                classes.append(span)
            elif span.lines > function_lines_max:
                shape.functions_over.append(span)
    named = [c for c in classes if c.name.split(":")[1] == serve_class_name]
    in_room = [c for c in classes if c.name.startswith(serve_room + "/")]
    shape.serve_class = _largest(named) or _largest(in_room)
    shape.largest_class = _largest(classes)
    for spans in (shape.modules_over, shape.functions_over, shape.dialect_modules):
        spans.sort(key=lambda span: (-span.lines, span.name))
    _rooms(shape, root)
    return shape


def _rooms(shape: Shape, root: Path) -> None:
    found = architecture.edges(root)
    shape.rooms = sorted({architecture.room(rel) for rel, _ in product_files(root)})
    shape.import_cycles = architecture.cycles(found)
    shape.imports_back_up = [list(edge) for edge in architecture.upward(found)]
    shape.core_imports_io = [list(pair) for pair in architecture.impure(root)]


def _listing(title: str, spans: list[Span], unit: str) -> list[str]:
    return [f"{title}: {len(spans)}"] + [f"  {s.lines:5} {unit}  {s.name}" for s in spans]


def render(shape: Shape) -> str:
    def one(span: Span | None) -> str:
        return f"{span.lines} lines ({span.name})" if span else "none"

    out = [f"product ({', '.join(packages)}): {shape.modules} modules, {shape.lines_total} lines"]
    out += _listing(f"modules over {module_lines_max} lines", shape.modules_over, "lines")
    out += _listing(f"functions over {function_lines_max} lines", shape.functions_over, "lines")
    out.append(f"serve loop class: {one(shape.serve_class)}")
    out.append(f"largest class: {one(shape.largest_class)}")
    out += _listing(f"modules naming {' or '.join(dialect_marks)}", shape.dialect_modules, "times")
    out.append(f"decide.py names orders_read: {'yes' if shape.decide_names_orders_read else 'no'}")
    out.append(f"rooms: {len(shape.rooms)} ({', '.join(shape.rooms)})")
    out.append(f"import cycles between rooms: {len(shape.import_cycles)}")
    out += [f"  {' -> '.join(ring)}" for ring in shape.import_cycles]
    for title, pairs in (
                         ("imports back up the layers", shape.imports_back_up),
                         ("core imports of I/O", shape.core_imports_io)):
        out.append(f"{title}: {len(pairs)}")
        out += [f"  {a} -> {b}" for a, b in pairs]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.shape", description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="one JSON object instead of text")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the repository to measure (default: this one)")
    args = parser.parse_args(argv)
    shape = measure(args.root)
    print(json.dumps(asdict(shape), indent=1) if args.json else render(shape))
    return 0


if __name__ == "__main__":
    sys.exit(main())
