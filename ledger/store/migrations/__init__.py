"""The schema's revisions, run by Alembic (SQLAlchemy's migration tool): `versions/` holds the
baseline and one file for each table change after it; `env.py` runs them on the connection
handed over here, in that connection's transaction. No alembic.ini: the configuration is built
in code. Only `ledger.store.schema` calls in, and only for a database that is not at the
code's revision: a store opened at its head never imports Alembic.

A new revision (a table change): write its file in versions/, named `NNNN_what.py`, with
`revision = "NNNN"` and `down_revision` the one before it (`new_revision` writes the file from
script.py.mako); then `schema.HEAD`, which tests/integration/test_schema.py holds equal to it.
"""
from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection

_HERE = Path(__file__).parent


def config(connection: Connection | None = None) -> Config:
    """Alembic's configuration for these revisions; `connection` is where env.py runs them."""
    made = Config()
    made.set_main_option("script_location", str(_HERE).replace("%", "%%"))
    made.attributes["connection"] = connection
    return made


def revisions() -> set[str]:
    """Every revision the code holds."""
    return {script.revision for script in ScriptDirectory.from_config(config()).walk_revisions()}


def head() -> str | None:
    return ScriptDirectory.from_config(config()).get_current_head()


def stored(conn: Connection) -> str | None:
    """The revision the database is at: None when it has no version table (or an empty one)."""
    return MigrationContext.configure(conn).get_current_revision()


def upgrade(conn: Connection) -> None:
    """Every revision after the stored one, in `conn`'s transaction (the caller's to commit)."""
    command.upgrade(config(conn), "head")


def new_revision(message: str, rev_id: str) -> None:
    """Write a new revision's file in versions/ (for a developer; never at run time)."""
    command.revision(config(), message=message, rev_id=rev_id)
