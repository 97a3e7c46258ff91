"""Which revision of the schema a database is at, and bringing it to the code's (`HEAD`).

The tables are Alembic's revisions (`ledger.store.migrations`): a baseline, then one revision
for each table change. Opening a store asks the database its revision, one query: at `HEAD`
nothing else happens, and Alembic is not even imported. Otherwise the schema's lock is taken
(`sql.migrating`: PostgreSQL's advisory lock, SQLite's write lock), the revision read again, and:
- no revision (an empty database, or one made before the schema had versions): every revision;
- an older one: the revisions after it, so a newer ledger upgrades the database it opens;
- one the code does not know: refused (SchemaTooNew), as a newer ledger wrote it.
Both databases run DDL in the transaction, so a start stopped halfway leaves nothing half made,
and a second process starting at once waits for the lock, then finds the work done.
"""
from __future__ import annotations

from eventsourcing.persistence import PersistenceError
from sqlalchemy.engine import Engine
from sqlalchemy.exc import OperationalError, ProgrammingError

from ledger.store import sql

HEAD = "0002"  # the newest revision in migrations/versions/ (tests/integration/test_schema.py holds them equal)
_STORED = "SELECT version_num FROM alembic_version"  # Alembic's own table: one row, the revision


class SchemaTooNew(PersistenceError):
    """The database is at a revision this ledger does not have: a newer ledger wrote it."""


def at_head(engine: Engine) -> bool:
    """Whether the database is at the code's revision (False for anything else, a database
    without the version table too: `bring_to_head` reads again under the lock)."""
    try:
        with sql.reading(engine) as conn:
            return conn.exec_driver_sql(_STORED).all() == [(HEAD,)]
    except (OperationalError, ProgrammingError):  # no version table yet
        return False


def bring_to_head(engine: Engine) -> None:
    """Bring the database to `HEAD`, or refuse one a newer ledger wrote (SchemaTooNew)."""
    if at_head(engine):
        return
    from ledger.store import migrations  # Alembic: only for a database that is not at HEAD

    with sql.migrating(engine) as conn:
        found = migrations.stored(conn)
        if found is not None and found not in migrations.revisions():
            raise SchemaTooNew(f"the database's schema is at revision {found}, which this ledger (at {HEAD})"
                               " does not have: a newer ledger wrote it. Run that ledger, or a newer one")
        migrations.upgrade(conn)
