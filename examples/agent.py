"""A small agent loop on the ledger: WorldState per turn, the gate, next steps. No model needed.

    python examples/agent.py                          # embedded ledger, SQLite in a temp folder
    python examples/agent.py --db sqlite:///agent.db
    python examples/agent.py --bootstrap localhost:9092 --db URL    # through Kafka (`ledger serve`
                                                      # must run), as the agent of $LEDGER_AGENT_TOKEN
                                                      # (read from --db, which also answers the lookups)

Each customer message is one turn. The "model" proposes tool calls (name + facts, as a
function-calling model would from `ledger tools`); the loop puts them in the turn's
WorldState, calls the gated tool, and does what `next_step` says with the outcome: proceed,
ask only for the unknown facts, show a conflict and stop, tell the real figure, retry a
rejected call once, or fail the turn (it then asks for a person with Escalate, and tells the
customer a person will follow up only if the ledger accepted that escalation). Every turn ends
with CompleteTurn.

The scripted model below plays a customer conversation that reaches every kind of step.
To use a real model, set LEDGER_AGENT_MODEL=package.module:function: the function takes
(message, world, tools, attempt) with tools = definitions("openai") and returns a list of
(tool_name, arguments) pairs (`place_order`, as `ledger tools` names them), the arguments being
the facts object the model produced.
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import inspect
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from commands.tools import definitions  # noqa: E402
from commands.world import NotAFact, WorldState  # noqa: E402
from consumers.agent.tools import LedgerTools, StoreCatalog  # noqa: E402
from consumers.agent.gate import FactsNotKnown  # noqa: E402
from consumers.agent.next_step import next_step  # noqa: E402

HERE = Path(__file__).resolve().parent
# Refusals on their way to the ledger through Kafka (the agent was answered without them):
# awaited before the client closes, so none is lost with it.
recording: list[Any] = []
BUSINESS, CUSTOMER = "mama-put-wholesale", "cust-ada"
Call = tuple[str, dict[str, Any]]


def k(value: Any, source: str = "message") -> dict[str, Any]:
    return {"status": "known", "value": value, "source": source}


U = {"status": "unknown"}
ME = k(CUSTOMER, "session")

# message -> what the model proposes on each attempt (a later attempt reuses the last one)
SCRIPT: list[tuple[str, list[list[Call]]]] = [
    ("Abeg send me rice like before.", [[("place_order", {"customer_id": ME, "lines": U, "note": U})]]),
    ("Two bags.", [[("place_order", {"customer_id": ME, "lines": k([{"sku": "rice-50kg", "quantity": 2}]), "note": U}),
                    ("issue_payment_link", {})]]),  # the order id is in the world: the ledger said it
    ("Add 6 kegs of palm oil.", [[("place_order", {"customer_id": ME, "lines": k([{"sku": "oil-25l", "quantity": 6}]), "note": U})]]),
    ("Make it 3 kegs. Or 4, my sister said 4.", [[("place_order", {"customer_id": ME, "note": U, "lines": {
        "status": "conflict", "values": [[{"sku": "oil-25l", "quantity": 3}], [{"sku": "oil-25l", "quantity": 4}]],
        "source": "message"}})]]),
    ("3 kegs, and 2 more bags of rice.", [[("place_order", {"customer_id": ME, "note": U, "lines": k(
        [{"sku": "oil-25l", "quantity": 3}, {"sku": "rice-50kg", "quantity": 2}])})]]),
    ("Oya one bag, quick quick.", [[("place_order", {"customer_id": ME, "note": U, "lines": "one bag rice"})],
                                   [("place_order", {"customer_id": ME, "note": U, "lines": k([{"sku": "rice-50kg", "quantity": "one"}])})]]),
    ("I want to talk to a person.", [[("escalate", {"reason": k("customer asked for a person")})]]),
]


def scripted_model(turn: int) -> Callable[..., list[Call]]:
    def propose(message: str, world: WorldState, tools: list[dict], attempt: int) -> list[Call]:
        tries = SCRIPT[turn][1]
        return tries[min(attempt, len(tries) - 1)]
    return propose


def real_model() -> Callable[..., list[Call]] | None:
    spec = os.environ.get("LEDGER_AGENT_MODEL")
    if not spec:
        return None
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


async def settle(result: Any) -> dict[str, Any]:
    return await result if inspect.isawaitable(result) else result


def show(say: Callable[[str], None], name: str, outcome: dict[str, Any]) -> None:
    where = (" (stopped at the gate; recorded by the ledger)" if outcome.get("gated")
             else " (refused before sending; recorded by the ledger)" if outcome.get("unsent") else "")
    say(f"  {name}: {outcome['status']}{' ' + outcome['reason'] if outcome['reason'] else ''}{where}")


async def run_turn(tools: LedgerTools, world: WorldState, message: str, propose: Callable[..., list[Call]],
                   say: Callable[[str], None]) -> list[str]:
    """One turn: returns the next-step actions taken, in order."""
    actions: list[str] = []
    replies: list[str] = []
    attempt = 0
    calls = propose(message, world, definitions("openai"), attempt)
    while calls:
        name, arguments = calls.pop(0)
        try:
            outcome = await settle(tools.call(name, world, arguments))
        except NotAFact as exc:  # a fact the command does not take, or not Fact-shaped: refused here
            outcome = {"status": "rejected", "reason": "malformed", "type": name, "unsent": True,
                       "details": {"error": str(exc)}}
            recording.append(exc.recorded)
        except FactsNotKnown as blocked:  # stopped at the gate: answered here, recorded by the ledger
            outcome = blocked.as_outcome()
            recording.append(blocked.recorded)
        show(say, name, outcome)
        step = next_step(outcome, attempt)
        actions.append(step.action)
        if step.action == "retry":
            attempt += 1
            calls = propose(message, world, definitions("openai"), attempt)
            continue
        if outcome.get("order_id"):  # the ledger said it: a known fact for the rest of the turn
            world.know("order_id", outcome["order_id"], "ledger")
        if step.say:
            replies.append(step.say)
        if step.action == "fail":
            world.know("reason", f"turn failed: {outcome['reason']}", "agent")
            escalated = await settle(tools.escalate(world))
            show(say, "escalate", escalated)
            if escalated["status"] == "accepted":  # only then is it true that a person has it
                replies.append(next_step(escalated).say)
        if step.action != "proceed":
            break
    reply = " ".join(replies) or "Okay."
    world.know("reply", reply, "agent")
    show(say, "CompleteTurn", await settle(tools.complete_turn(world)))
    say(f"agent: {reply}")
    return actions


async def conversation(tools: LedgerTools, catalog: StoreCatalog | None, say: Callable[[str], None],
                       agent_id: str = "example-agent") -> list[str]:
    world = WorldState(business_id=BUSINESS, agent_id=agent_id, conversation_id="conv-ada-example",
                       turn_id="t0", catalog=catalog)
    world.know("customer_id", CUSTOMER, "session")
    actions: list[str] = []
    model = real_model()
    for turn, (message, _) in enumerate(SCRIPT):
        world = world.next_turn(f"t{turn + 1}", carry=("customer_id",))
        say(f"\ncustomer: {message}")
        if catalog is not None:  # read-only lookups: allowed whatever is still unknown
            say(f"  (lookup: rice-50kg {world.stock('rice-50kg')} left, oil-25l {world.stock('oil-25l')} left)")
        actions += await run_turn(tools, world, message, model or scripted_model(turn), say)
    return actions


def shop_commands() -> list[bytes]:
    return [line for line in (HERE / "shop.jsonl").read_bytes().splitlines() if line.strip()]


async def main_async(args: argparse.Namespace, say: Callable[[str], None]) -> list[str]:
    from ledger.store.database import Store
    folder = tempfile.mkdtemp(prefix="ledger-agent-")
    db = args.db or (None if args.bootstrap else f"sqlite:///{folder}/agent.db")
    store = Store(db) if db else None
    if store is not None:
        store.create_tables()
    catalog = StoreCatalog(store) if store is not None else None
    if not args.bootstrap:
        from ledger.service import Ledger
        ledger = Ledger(store)
        ledger.handle(shop_commands(), "owner")
        return await conversation(LedgerTools.embedded(ledger), catalog, say)
    from consumers.agent.client import LedgerClient
    token = os.environ.get("LEDGER_AGENT_TOKEN")
    agent_id = args.agent or token_agent(store, token)
    async with LedgerClient(args.bootstrap, token=token,
                            owner_token=os.environ.get("LEDGER_OWNER_TOKEN")) as client:
        for raw in shop_commands():
            await client.submit(orjson.loads(raw), admin=True)
        actions = await conversation(LedgerTools.kafka(client), catalog, say, agent_id)
        await asyncio.gather(*(r for r in recording if inspect.isawaitable(r)), return_exceptions=True)
        return actions


def token_agent(store: Any, token: str | None) -> str:
    """The agent id `ledger agents add` registered for the token (the one `ledger serve` checks
    every command against), read from the ledger's database."""
    from ledger.store.agents import AgentKeys

    found = None
    if store is not None and token:
        keys = AgentKeys(store)
        keys.refresh()
        found = keys.find(token)
    if found is None:
        sys.exit("examples/agent.py: through Kafka it needs $LEDGER_AGENT_TOKEN of an active agent and the "
                 "ledger's --db to read which agent that is (or name it with --agent)")
    return found.agent_id


def main(argv: list[str] | None = None, say: Callable[[str], None] = print) -> list[str]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", metavar="URL", help="SQLAlchemy URL (embedded: the ledger's; Kafka: for lookups only)")
    p.add_argument("--bootstrap", metavar="HOST:PORT", help="talk to `ledger serve` through Kafka")
    p.add_argument("--agent", metavar="ID", help="through Kafka: the agent id (default: the token's, read from --db)")
    return asyncio.run(main_async(p.parse_args(argv), say))


if __name__ == "__main__":
    main()
