"""Who watches the ledger decide: callbacks the composition root registers (the metrics in
consumers/ops count outcomes and time batches with them). ledger/ knows no metrics library,
and every door is seen alike because every door decides through `Ledger`."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

# (door, the outcomes of one batch, the seconds it took to decide and write them)
Watcher = Callable[[str, Sequence[Mapping[str, Any]], float], None]
watchers: list[Watcher] = []


def decided(door: str, outcomes: Sequence[Mapping[str, Any]], seconds: float) -> None:
    for watch in watchers:
        watch(door, outcomes, seconds)
