"""unreadable.install() replaces a private name of aiokafka's fetcher: an aiokafka without
that name is refused at install, by name, never patched blind."""
from __future__ import annotations

import pytest

from consumers.kafka import unreadable


def test_install_refuses_an_aiokafka_whose_fetcher_has_no_memory_records(monkeypatch):
    from aiokafka.consumer import fetcher

    # given an aiokafka whose fetcher no longer looks MemoryRecords up by that name
    monkeypatch.delattr(fetcher, "MemoryRecords")
    # when the consumer installs SafeRecords, then it stops, naming what is missing
    with pytest.raises(RuntimeError, match="MemoryRecords"):
        unreadable.install()
    assert not hasattr(fetcher, "MemoryRecords")


def test_install_points_the_fetcher_at_safe_records(monkeypatch):
    from aiokafka.consumer import fetcher

    # given the aiokafka pyproject pins (monkeypatch puts its MemoryRecords back afterwards)
    monkeypatch.setattr(fetcher, "MemoryRecords", fetcher.MemoryRecords)
    # when installed, then each fetch response is read through SafeRecords
    unreadable.install()
    assert fetcher.MemoryRecords is unreadable.SafeRecords
