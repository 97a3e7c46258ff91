"""What `ledger serve`'s metrics and health read of its consumer, without reaching into it
beyond what it keeps anyway: the assignment and highwater marks (aiokafka's, as of the last
fetch) and the offsets it has applied (the database's, as the server last stored them)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from consumers.kafka.consumer import Server


class ServeConsumer:
    def __init__(self, server: Server):
        self.server = server

    def held(self) -> list[tuple[str, int, int | None]]:
        consumer = self.server.consumer
        if consumer is None:
            return []
        try:
            assigned = sorted(consumer.assignment())
        except Exception:  # not started, or stopping: it holds nothing
            return []
        applied = self.server.progress.applied()
        found = []
        for tp in assigned:
            high = consumer.highwater(tp)
            done = applied.get(tp)
            lag = None if high is None else max(0, high - (done + 1 if done is not None else 0))
            found.append((tp.topic, tp.partition, lag))
        return found
