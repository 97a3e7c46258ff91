"""Serve's provider calls on its event loop (ledger/links.py, `AskingOnLoop`): one call a
reference, at most `links_in_flight_max` at once, and every call one answer, whether the
provider answers on the loop, only in a thread, refuses or fails."""
from __future__ import annotations

import asyncio
import threading
from types import SimpleNamespace

from ledger import links
from ledger.providers.base import ProviderUnavailable, SandboxProvider


def hold(reference: str) -> SimpleNamespace:
    issued = SimpleNamespace(reference=reference, business_id="shop-1", order_id="ord-1", amount=4500)
    return SimpleNamespace(issued=issued, currency="NGN")


def asked(provider, holds) -> dict[str, links.Made]:
    async def run():
        asking = links.AskingOnLoop(provider)
        calls = asking.start(holds)
        await asyncio.wait(calls.values())
        made = asking.answers(calls)
        await asking.aclose()
        return made
    return asyncio.run(run())


class Slow:
    """A provider on the loop that counts its calls in flight."""
    name = "slow"

    def __init__(self) -> None:
        self.now = self.most = self.calls = 0

    async def create_link_async(self, *, reference: str, **_: object) -> str:
        self.now, self.calls = self.now + 1, self.calls + 1
        self.most = max(self.most, self.now)
        await asyncio.sleep(0.01)
        self.now -= 1
        return f"https://pay.example/{reference}"


def test_one_call_a_reference_however_many_holds_name_it():
    provider = Slow()
    made = asked(provider, [hold("lnk-a"), hold("lnk-a"), hold("lnk-b")])
    assert provider.calls == 2 and {r: m.url for r, m in made.items()} == {
        "lnk-a": "https://pay.example/lnk-a", "lnk-b": "https://pay.example/lnk-b"}


def test_no_more_calls_at_once_than_links_in_flight_max():
    provider = Slow()
    made = asked(provider, [hold(f"lnk-{n}") for n in range(links.links_in_flight_max + 50)])
    assert len(made) == links.links_in_flight_max + 50 and provider.most == links.links_in_flight_max


def test_the_sandbox_answers_on_the_loop_itself():
    where: list[str] = []

    class Watched(SandboxProvider):
        def create_link(self, **kwargs) -> str:
            where.append(threading.current_thread().name)
            return super().create_link(**kwargs)
    made = asked(Watched(), [hold("lnk-a")])
    assert made["lnk-a"].url == "https://pay.sandbox.invalid/l/lnk-a" and where == [threading.main_thread().name]


def test_a_provider_with_only_a_blocking_call_is_called_in_a_thread():
    where: list[str] = []

    class Blocking:
        name = "blocking"

        def create_link(self, *, reference: str, **_: object) -> str:
            where.append(threading.current_thread().name)
            return f"https://pay.example/{reference}"
    made = asked(Blocking(), [hold("lnk-a")])
    assert made["lnk-a"].url == "https://pay.example/lnk-a" and where != [threading.main_thread().name]


def test_a_refusal_and_a_fault_of_ours_are_each_one_answer_without_a_url():
    class Failing:
        name = "failing"

        async def create_link_async(self, *, reference: str, **_: object) -> str:
            if reference == "lnk-refused":
                raise ProviderUnavailable("paystack POST /transaction/initialize: 503 down")
            raise KeyError("data")
    made = asked(Failing(), [hold("lnk-refused"), hold("lnk-fault")])
    assert made["lnk-refused"] == links.Made(None, "paystack POST /transaction/initialize: 503 down", 4500)
    assert made["lnk-fault"] == links.Made(None, "KeyError: 'data'", 4500)
