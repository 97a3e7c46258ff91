"""Shared fixtures: one store test case, run against SQLite and PostgreSQL.

PostgreSQL is the machine's (127.0.0.1:5432, trust auth). Each pytest process gets its
own database, and each test a fresh schema in it, so runs never see each other's rows.
"""
from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from ledger.service import Ledger
from ledger.store.database import Store
from tests.broker import kafka_bootstrap  # noqa: F401
from tests.fake_provider import FakeProvider

PG_ADMIN_URL = os.environ.get("LEDGER_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


def _pg_admin() -> psycopg.Connection:
    return psycopg.connect(PG_ADMIN_URL, autocommit=True)


@pytest.fixture(scope="session")
def pg_database() -> str:
    """A database of this test run's own, dropped at the end."""
    name = f"ledger_test_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    try:
        with _pg_admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:  # pragma: no cover - only when the service is down
        pytest.fail(f"PostgreSQL is not reachable at {PG_ADMIN_URL}: {exc}")
    base = PG_ADMIN_URL.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://")
    yield f"{base}/{name}"
    with _pg_admin() as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _fresh_pg(url: str) -> str:
    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
        conn.execute("CREATE SCHEMA public")
    return url


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """A fresh, empty SQLite database (a file of this test's own)."""
    return f"sqlite:///{tmp_path}/ledger.db"


@pytest.fixture
def postgres_url(pg_database) -> str:
    """A fresh, empty PostgreSQL schema in this run's database."""
    return _fresh_pg(pg_database)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request) -> str:
    """A fresh, empty database URL, once per backend (a test class of its own per backend
    instead: tests/integration/test_store.py)."""
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture
def store(db_url) -> Store:
    s = Store(db_url)
    s.create_tables()
    yield s
    s.close()


@pytest.fixture
def ledger(store) -> Ledger:
    return Ledger(store)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    """The local stand-in for Paystack's and Stripe's APIs (tests/fake_provider.py), one a
    module: each test `reset`s it."""
    fake = FakeProvider()
    fake.start()
    yield fake
    fake.stop()
