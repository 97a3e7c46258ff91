"""`ledger mcp` embedded takes tool calls on several threads at once (HTTP): the runtime alone
keeps them apart (its token cache refreshes one at a time, the Ledger writes one batch at a
time), with no lock of the MCP door's own."""
from __future__ import annotations

import threading

import orjson

from consumers.mcp.backends import Embedded
from consumers.runtime import bootstrap
from ledger.store import agents
from tests.builders import line, order, product
from tests.given import a_shop, appended, owner, types

threads_count = 6
calls_each = 15


def test_calls_on_many_threads_while_agents_change_are_each_checked_and_decided_once(ledger, store):
    # given: a shop with stock enough for every call, its agent, and the MCP door's runtime
    a_shop(ledger)
    owner(ledger, product("tea", 100, threads_count * calls_each))
    token = agents.register(ledger, "shop-1", "bot")
    runtime = bootstrap(store, checked=["agent"])
    backend = Embedded(runtime, token)
    since = store.max_position()
    outcomes: list[dict] = []

    def calls(n: int) -> None:
        for i in range(calls_each):
            command = order("cust-1", [line("tea", 1)], command_id=f"t{n}-{i}")
            outcomes.append(backend._submit(orjson.dumps(command)))

    def registrations() -> None:  # each bumps the tokens' change counter: every call's refresh reads them again
        for i in range(calls_each):
            agents.register(runtime.ledger, "shop-1", f"helper-{i}")

    # when
    workers = [threading.Thread(target=calls, args=(n,)) for n in range(threads_count)]
    workers.append(threading.Thread(target=registrations))
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    # then: every call accepted once, its order placed once, the stock down by as many
    assert sorted((o["status"], o["duplicate"]) for o in outcomes) == [("accepted", False)] * threads_count * calls_each
    assert types(appended(store, since)).count("OrderPlaced") == threads_count * calls_each
    assert runtime.ledger.state("shop-1").products["tea"].available == 0
