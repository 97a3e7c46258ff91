"""A poll written but for its commands held for the payment provider's answer (writer.py)."""
from __future__ import annotations

import asyncio
from collections.abc import Collection
from dataclasses import dataclass, field

from aiokafka.structs import ConsumerRecord

from ledger.batch import Hold, Made
from ledger.service import Handled, Raw


@dataclass
class Ahead:
    door: str
    records: list[ConsumerRecord]  # the poll's records written by its first round, in order
    raws: list[Raw]  # each record's input as the first round read it
    first: Handled  # the first round: `holds` are the commands held
    calls: dict[str, asyncio.Future[Made]]  # the provider's calls they wait for, by reference (tasks on the loop)
    started: float  # when the poll's first round began (perf_counter): a held command's time to its outcome
    gone: set[int] = field(default_factory=set)  # holds (by `at`) another process answers: not ours any more

    def ready(self) -> bool:
        return all(call.done() for call in self.calls.values())

    async def answered(self) -> None:
        """Until every call is answered (each ends within the provider adapter's timeout)."""
        waiting = [call for call in self.calls.values() if not call.done()]
        if waiting:
            await asyncio.wait(waiting)

    def held_records(self) -> list[ConsumerRecord]:
        return self.records_of(self.first.holds)

    def records_of(self, holds: list[Hold]) -> list[ConsumerRecord]:
        return [self.records[hold.at] for hold in holds]

    def ours(self) -> list[Hold]:
        return [hold for hold in self.first.holds if hold.at not in self.gone]

    def keep(self, present: Collection[tuple[str, int, int]]) -> None:
        """Only the holds whose rows are still `present` (topic, partition, offset) stay ours."""
        for hold in self.first.holds:
            record = self.records[hold.at]
            if (record.topic, record.partition, record.offset) not in present:
                self.gone.add(hold.at)
