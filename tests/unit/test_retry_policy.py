"""The one retry policy (ledger/retry.py), as serve's loops use it: a stop ends the retries,
not the work in hand, and what changed is learnt before each retry."""
import asyncio

import pytest

from ledger.retry import retrying_async


def run(coro):
    return asyncio.run(coro)


def test_work_in_hand_is_tried_once_even_when_the_stop_came_first():
    # given: the stop already set (SIGTERM came while the poll was in flight)
    async def scenario():
        stop, calls = asyncio.Event(), []
        stop.set()

        async def write():
            calls.append(1)
            return "written"
        # when: the batch in hand is written
        return await retrying_async(write, stop, "writing"), calls
    # then: it is written, once
    assert run(scenario()) == ("written", [1])


def test_a_stop_during_the_wait_ends_the_retries_without_another_try():
    # given: a write that fails, and a stop that comes while the policy waits to retry
    async def scenario():
        stop, calls = asyncio.Event(), []

        async def away():
            calls.append(1)
            asyncio.get_running_loop().call_soon(stop.set)
            raise ConnectionError("database away")
        # when
        return await retrying_async(away, stop, "writing"), calls
    # then: None (not done), after the one try
    assert run(scenario()) == (None, [1])


def test_what_changed_is_learnt_before_each_retry_and_not_before_the_first_try():
    # given: a write that fails twice, then works
    async def scenario():
        stop, seen = asyncio.Event(), []

        async def flaky():
            seen.append("try")
            if seen.count("try") < 3:
                raise ConnectionError("database away")
            return "written"

        async def resync():
            seen.append("resync")
        # when
        return await retrying_async(flaky, stop, "writing", before_retry=resync), seen
    # then: each retry follows a resync
    assert run(scenario()) == ("written", ["try", "resync", "try", "resync", "try"])


def test_a_failure_not_worth_retrying_is_raised_without_a_resync():
    # given: a bug, not an outage
    seen = []

    async def bug():
        seen.append("try")
        raise ValueError("a bug")

    async def resync():
        seen.append("resync")
    # when / then: raised at once
    with pytest.raises(ValueError):
        run(retrying_async(bug, asyncio.Event(), "writing", before_retry=resync))
    assert seen == ["try"]
