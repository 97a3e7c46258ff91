"""Unit tests run without a database or a broker: asking for one here fails the test, so a
test that needs one is written in tests/integration/ (or tests/e2e/) instead."""
from __future__ import annotations

import pytest


def _not_here(what: str) -> None:
    pytest.fail(f"a unit test takes no {what}: this test belongs in tests/integration/", pytrace=False)


@pytest.fixture
def db_url() -> str:
    _not_here("database")


@pytest.fixture
def sqlite_url() -> str:
    _not_here("database")


@pytest.fixture
def postgres_url() -> str:
    _not_here("database")


@pytest.fixture
def pg_database() -> str:
    _not_here("database")


@pytest.fixture
def kafka_bootstrap() -> str:
    _not_here("broker")
