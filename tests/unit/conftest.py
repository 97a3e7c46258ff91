"""Unit tests run without a database or a broker: asking for one here fails the test, so a
test that needs one is written in tests/integration/ (or tests/e2e/) instead."""
from __future__ import annotations

import pytest


def _refused(what: str):
    @pytest.fixture
    def refused() -> None:
        pytest.fail(f"a unit test takes no {what}: this test belongs in tests/integration/", pytrace=False)
    return refused


db_url = sqlite_url = postgres_url = pg_database = _refused("database")
kafka_bootstrap = _refused("broker")
