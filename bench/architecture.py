"""The rooms and the imports between them, read from the code: `python -m bench.architecture`.

A room is a top package (commands, ledger, projections), a door's package inside consumers
(consumers/kafka, consumers/cli, ...; modules directly in consumers/ are the room
`consumers`), or a room inside ledger (ledger/core, the pure decision; ledger/store, the
database; modules directly in ledger/ are the runtime, the room `ledger`). An edge A --> B says some module of A imports one of B, at the top or inside a
function. Prints the Mermaid graph; `--write` puts it into docs/architecture.md between its
markers, where tests/unit/test_architecture.py holds it equal to a fresh generation and
holds that no import runs back up the layers.
"""
from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

from bench.tree import packages, product_files

# commands <- ledger <- projections <- consumers: a room may import its own layer or lower ones.
layers = {package: rank for rank, package in enumerate(packages)}
# Inside ledger: core <- store, providers <- the runtime (modules directly in ledger/).
ledger_rooms = {"ledger/core": 0, "ledger/store": 1, "ledger/providers": 1, "ledger": 2}
# What the pure core may import: its own room, commands, the standard library's pure parts (no
# clock, ids, threads, files or network; datetime only parses), pydantic and orjson.
core_imports_allowed = frozenset({
    "__future__", "collections", "dataclasses", "datetime", "enum", "functools", "hashlib",
    "importlib", "inspect", "itertools", "json", "math", "operator", "re", "struct", "typing",
    "unicodedata", "decimal", "bisect", "copy", "orjson", "pydantic", "commands", "ledger.core"})
doc_path = Path("docs/architecture.md")
begin_mark = "<!-- begin: python -m bench.architecture --write -->"
end_mark = "<!-- end: python -m bench.architecture --write -->"


# Packages whose subpackages are rooms of their own: a door's package in consumers, and the
# core and the store in ledger.
_ROOMED = ("consumers", "ledger")


def room(rel: str) -> str:
    """consumers/kafka/serve.py -> consumers/kafka; ledger/store/sql.py -> ledger/store;
    ledger/service.py -> ledger."""
    parts = rel.split("/")
    return "/".join(parts[:2]) if parts[0] in _ROOMED and len(parts) > 2 else parts[0]


def _module_name(rel: str) -> str:
    name = rel.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def _imported(tree: ast.AST, package: str) -> set[tuple[str, ...]]:
    """What this module imports, each as the names it may be, most precise first:
    `from a import b` is module a.b if there is one, else a name in a."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update((alias.name,) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.update((f"{module}.{alias.name}", module) for alias in node.names)
    return found


def edges(root: Path) -> set[tuple[str, str]]:
    """(importing room, imported room) for every import across rooms."""
    files = dict(product_files(root))
    rooms = {_module_name(rel): room(rel) for rel in files}
    found = set()
    for rel, text in files.items():
        name = _module_name(rel)
        package = name if rel.endswith("__init__.py") else name.rpartition(".")[0]
        for names in _imported(ast.parse(text, rel), package):
            theirs = next((rooms[n] for n in names if n in rooms), None)
            if theirs and theirs != room(rel):
                found.add((room(rel), theirs))
    return found


def _layer(name: str) -> tuple[int, int]:
    return layers[name.split("/")[0]], ledger_rooms.get(name, 0)


def upward(found: set[tuple[str, str]]) -> list[tuple[str, str]]:
    """The edges that run back up the layers (a lower layer importing a higher one), the rooms
    inside ledger included (the core importing the store, the store importing the runtime)."""
    return sorted((a, b) for a, b in found if _layer(a) < _layer(b))


def impure(root: Path) -> list[tuple[str, str]]:
    """(module, what it imports) for each import of the core that is not on its allowed list."""
    found = []
    for rel, text in product_files(root):
        if room(rel) != "ledger/core":
            continue
        for names in _imported(ast.parse(text, rel), "ledger.core"):
            module = names[-1]
            if not any(module == ok or module.startswith(ok + ".") for ok in core_imports_allowed):
                found.append((rel, module))
    return sorted(found)


def cycles(found: set[tuple[str, str]]) -> list[list[str]]:
    """The rooms in each import cycle, of any length (a strongly connected group of rooms)."""
    reach: dict[str, set[str]] = {}
    for a, b in found:
        reach.setdefault(a, set()).add(b)
    for start in list(reach):  # what each room reaches, through any number of imports
        seen, todo = set(), [start]
        while todo:
            for nxt in reach.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        reach[start] = seen
    groups = {tuple(sorted({a} | {b for b in reach[a] if a in reach.get(b, ())})) for a in reach if a in reach[a]}
    return sorted(list(g) for g in groups)


def _label(name: str) -> str:
    return "consumers/*.py (shared)" if name == "consumers" else name


def render(found: set[tuple[str, str]]) -> str:
    """A Mermaid flowchart (importers above what they import, consumers' rooms grouped), then
    the rooms in an import cycle."""
    def node(name: str) -> str:
        return name.replace("/", "_")

    def down(name: str) -> tuple[int, int]:
        return tuple(-rank for rank in _layer(name))  # type: ignore[return-value]

    names = sorted({name for edge in found for name in edge}, key=lambda n: (down(n), n))
    out = ["```mermaid", "flowchart TD"]
    doors = [n for n in names if _layer(n)[0] == layers["consumers"]]
    if doors:
        out.append("  subgraph consumers_rooms [consumers]")
        out += [f'    {node(n)}["{_label(n)}"]' for n in doors]
        out.append("  end")
    out += [f'  {node(n)}["{_label(n)}"]' for n in names if n not in doors]
    out += [f"  {node(a)} --> {node(b)}" for a, b in sorted(found, key=lambda e: (down(e[0]), e))]
    rings = "; ".join(" -> ".join(map(_label, ring)) for ring in cycles(found)) or "none"
    out += ["```", "", f"Rooms in an import cycle: {rings}."]
    return "\n".join(out) + "\n"


def _parts(doc: str) -> tuple[str, str, str]:
    """docs/architecture.md as (up to its begin marker's line, the generated part, from its end marker)."""
    head, rest = doc.split(begin_mark + "\n", 1)
    picture, tail = rest.split(end_mark, 1)
    return head + begin_mark + "\n", picture, end_mark + tail


def stored(doc: str) -> str:
    """The generated part of docs/architecture.md, between its markers."""
    return _parts(doc)[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.architecture", description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"update {doc_path} between its markers")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = parser.parse_args(argv)
    found = edges(args.root)
    picture = render(found)
    if not args.write:
        sys.stdout.write(picture)
    else:
        path = args.root / doc_path
        head, _, tail = _parts(path.read_text(encoding="utf-8"))
        path.write_text(head + picture + tail, encoding="utf-8")
    for a, b in upward(found):
        print(f"{a} imports {b}: an arrow back up the layers", file=sys.stderr)
    for rel, module in impure(args.root):
        print(f"{rel} imports {module}: the core imports no I/O", file=sys.stderr)
    return 1 if upward(found) or impure(args.root) else 0


if __name__ == "__main__":
    sys.exit(main())
