"""The product's modules as text, for the readers of its shape (bench.shape, bench.architecture)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

packages = ("commands", "ledger", "projections", "consumers")


def product_files(root: Path) -> Iterator[tuple[str, str]]:
    """(path relative to root, text) of every module of the product, in path order."""
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            yield path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")
