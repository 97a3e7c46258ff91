"""How often `ledger serve` hurries its child's event relay, without Kafka or a database:
at most once an interval, however many batches go out in it, and never forgetting the last."""
import asyncio

from consumers.kafka.consumer import Coalesced

interval_s = 0.1  # wide enough for a loaded machine's late timers


async def woken_at(calls_at_s: list[float], watch_s: float, cancel_at_s: float | None = None) -> list[float]:
    """Call a Coalesced wake at each time (seconds from the start), cancel it at `cancel_at_s`;
    when did it wake, by `watch_s`?"""
    loop = asyncio.get_running_loop()
    start, wakes = loop.time(), []
    coalesced = Coalesced(lambda: wakes.append(loop.time() - start), interval_s)
    for at in calls_at_s:
        await asyncio.sleep(max(0.0, start + at - loop.time()))
        coalesced()
    if cancel_at_s is not None:
        await asyncio.sleep(max(0.0, start + cancel_at_s - loop.time()))
        coalesced.cancel()
    await asyncio.sleep(max(0.0, start + watch_s - loop.time()))
    return wakes


def test_batches_closer_than_the_interval_wake_once_now_and_once_for_all_the_rest_later():
    # given: five batches out 5 ms apart, then nothing
    # when: each tells the coalesced wake
    wakes = asyncio.run(woken_at([0.0, 0.005, 0.01, 0.015, 0.02], watch_s=0.4))
    # then: the first wakes at once, the other four together by the late timer (twice the interval)
    assert len(wakes) == 2
    assert wakes[0] < 0.05
    assert 2 * interval_s - 0.001 <= wakes[1] < 3 * interval_s


def test_a_batch_after_the_interval_wakes_at_once_and_takes_the_late_timers_place():
    # given: a batch at 0 (wakes), one at 10 ms (left for later), one at 120 ms (past the interval)
    # when: each tells the coalesced wake
    wakes = asyncio.run(woken_at([0.0, 0.01, 0.12], watch_s=0.4))
    # then: the third wakes at once, covering the second's; the late timer (at 200 ms) never fires
    assert len(wakes) == 2
    assert 0.12 <= wakes[1] < 2 * interval_s


def test_a_cancelled_wake_leaves_no_timer_behind():
    # given: a wake now and one left for later
    # when: serve stops (its child takes its last steps anyway)
    wakes = asyncio.run(woken_at([0.0, 0.01], cancel_at_s=0.02, watch_s=0.4))
    # then: only the first woke, and nothing fired afterwards
    assert len(wakes) == 1
