"""A command type is declared once, in its model: every door's list of the types (tools, MCP,
the agent's gated tools, the web's words, the outcome's fields, the door a type belongs to)
is derived from the models, so a new type is four product files: its model, its rule, its
event and how that event changes the state (docs/architecture.md, "Adding a command type")."""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from bench.tree import packages, product_files
from commands.models import AGENT_TYPES, COMMAND_TYPES
from ledger.core import events as ev

ROOT = Path(__file__).resolve().parents[2]

# Where a list of command types may be written: the doors' unions (the models) and the rules' table.
LISTS_ALLOWED = frozenset({"commands/models.py", "ledger/core/decide.py"})
# Written out on purpose, never read from the models: a checker that asked the models would
# share their mistakes. A new type is not fuzzed until it is added here; nothing else needs it.
ORACLES = {"consumers/agent/fuzz.py": "the fuzzer's own reading of each type's required facts (CONTRACT 4)",
           "consumers/agent/sloppy.py": "which commands a sloppy agent sends, how often, with what facts"}

# --- the throwaway types, one a door, written into a copy of the product --------------------

_MODELS = '''

class AskCallbackFacts(Facts):
    customer_id: required(Id, "The customer's id in this business.") = UNKNOWN
    when: optional(FreeText, "When the customer wants to be called.") = UNKNOWN


class AskCallback(AgentCommand):
    type: Literal["AskCallback"]
    facts: AskCallbackFacts
    purpose = "Ask the owner to call the customer back."
    label = "Ask for a call back"
    first_events = ("CallbackAsked",)
    outcome_fields = ("escalation_id",)


class RenameProductFacts(Facts):
    sku: required(Id) = UNKNOWN
    name: required(FreeText) = UNKNOWN


class RenameProduct(OwnerCommand):
    type: Literal["RenameProduct"]
    facts: RenameProductFacts
    label = "Rename a product"
'''
_RULES = '''
def _ask_callback(state: BusinessState, c: m.AskCallback, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    customer_id = c.facts.customer_id.value
    if customer_id not in state.customers:
        raise Blocked("unknown_customer", details={"customer_id": customer_id})
    return [ev.CallbackAsked(**ctx, customer_id=customer_id, when=c.facts.when.value if c.facts.when.known else None),
            ev.EscalationRaised(**ctx, escalation_id=stamp.escalation_id, cause="agent", reason="call back")]


def _rename_product(state: BusinessState, c: m.RenameProduct, stamp: Stamp, ctx: dict[str, Any]) -> list[ev.Event]:
    f = c.facts.known_values()
    _existing_product(state, f["sku"])
    return [ev.ProductRenamed(**ctx, sku=f["sku"], name=f["name"])]


'''
_EVENTS = '''@dataclass(frozen=True, kw_only=True)
class CallbackAsked(Event):
    customer_id: str
    when: str | None = None


@dataclass(frozen=True, kw_only=True)
class ProductRenamed(Event):
    sku: str
    name: str


'''
_EVOLVE = '''

    @_apply.register
    def _(self, e: ev.ProductRenamed) -> None:
        self.products[e.sku].name = e.name
'''
# file -> (anchor, what goes in, where): each anchor must be found exactly once.
_EDITS = {
    "commands/models.py": [(r"\n\nAgentCommandT = ", _MODELS, "before"),
                           (r"Union\[PlaceOrder, ", "AskCallback, ", "after"),
                           (r"Union\[RegisterProduct, ", "RenameProduct, ", "after")],
    "ledger/core/decide.py": [(r"_RULES: dict\[", _RULES, "before"),
                              (r"_RULES: dict\[[^\n]*= \{\n", "    m.AskCallback: _ask_callback, m.RenameProduct: _rename_product,\n",
                               "after")],
    "ledger/core/events.py": [(r"# --- construction", _EVENTS, "before")],
    "ledger/core/state.py": [(r"\n\n\ndef _held\(", _EVOLVE, "before")],
}

# Run against the copy: what every derived list makes of the new types, and a command of each decided.
_CHECK = r'''
import json, sys
import orjson
from commands import models, tools
from commands.parsing import Parsed, parse
from consumers.agent.tools import LedgerTools
from consumers.http.web import pages, words
from consumers.mcp import tools as mcp_tools
from ledger.core import codec, events as ev
from ledger.core.decide import Stamp, decide, refuse
from ledger.core.outcome import outcome
from ledger.core.state import BusinessState
from tests.decided import given

assert models.__file__.startswith(sys.argv[1]), models.__file__  # the copy, not the tree
stamp = Stamp("2026-12-01T12:00:00.000000Z", "id-1")
ctx = dict(business_id="shop-1", command_id="c-0", recorded_at=stamp.recorded_at)
state = BusinessState("shop-1")
for e in (ev.ProductRegistered(**ctx, sku="rice", name="Rice", unit_price=100, stock=1),
          ev.CustomerRegistered(**ctx, customer_id="cust-1", name="Ada", credit_limit=0)):
    state.evolve(e)


def known(value):
    return {"status": "known", "value": value, "source": "session"}


def through(kind, facts, door):
    raw = orjson.dumps({"command_id": "c-1", "type": kind, "business_id": "shop-1", "agent_id": "bot",
                        "conversation_id": "conv-1", "turn_id": "t-1", "facts": facts})
    parsed = parse(raw, door)
    events = decide(state, parsed.command, stamp) if isinstance(parsed, Parsed) else refuse(parsed, stamp)
    for e in events:
        assert codec.decode(e.type, codec.encode(e)) == e
        state.evolve(e)
    return outcome(parsed, events, state.currency)


given(ev.ProductRegistered(**ctx, sku="rice", name="Rice", unit_price=100, stock=1)).when(
    {"command_id": "c-1", "type": "RenameProduct", "business_id": "shop-1",
     "facts": {"sku": known("rice"), "name": known("Long rice")}}).then(
    ev.ProductRenamed(**{**ctx, "command_id": "c-1"}, sku="rice", name="Long rice"))
openai = {d["function"]["name"]: d["function"] for d in tools.definitions("openai")}
print(json.dumps({
    "doors": {kind: model.door for kind, model in models.COMMAND_TYPES.items()},
    "tools": tools.TOOLS, "mcp": [t.name for t in mcp_tools.listed()],
    "description": openai["ask_callback"]["description"],
    "when": openai["ask_callback"]["parameters"]["properties"]["when"]["description"],
    "gated": vars(LedgerTools)["ask_callback"].__gated__,
    "words": [words.kind("AskCallback"), words.kind("RenameProduct")],
    "command_of": pages._COMMAND_OF,
    "asked": through("AskCallback", {"customer_id": known("cust-1"), "when": known("after 5pm")}, "agent"),
    "unknown": through("AskCallback", {}, "agent"),
    "wrong_door": through("AskCallback", {"customer_id": known("cust-1")}, "owner"),
    "renamed": through("RenameProduct", {"sku": known("rice"), "name": known("Long rice")}, "owner"),
    "name_now": state.products["rice"].name,
}))
'''


def _edited(text: str, edits: list[tuple[str, str, str]]) -> str:
    for anchor, insert, where in edits:
        found = list(re.finditer(anchor, text))
        assert len(found) == 1, f"anchor {anchor!r} found {len(found)} times: move this test's edit with the code"
        at = found[0].start() if where == "before" else found[0].end()
        text = text[:at] + insert + text[at:]
    return text


def _copy_with_new_types(to: Path) -> list[str]:
    """The product copied to `to`, the edits made; the product files that differ, by path."""
    for package in packages:
        shutil.copytree(ROOT / package, to / package, ignore=shutil.ignore_patterns("__pycache__"))
    for rel, edits in _EDITS.items():
        (to / rel).write_text(_edited((to / rel).read_text(encoding="utf-8"), edits), encoding="utf-8")
    return sorted(rel for package in packages for path in (to / package).rglob("*") if path.is_file()
                  for rel in [path.relative_to(to).as_posix()]
                  if (ROOT / rel).read_bytes() != path.read_bytes())


def test_a_new_command_type_needs_its_model_rule_event_and_evolve_and_nothing_else(tmp_path):
    # given: an agent type and an owner type, each with its rule and event, in a copy of the product
    changed = _copy_with_new_types(tmp_path)
    # when: the copy's derived lists and decisions are asked about them
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    run = subprocess.run([sys.executable, "-c", _CHECK, str(tmp_path)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    # then: four product files changed, and every list has the types
    assert changed == ["commands/models.py", "ledger/core/decide.py", "ledger/core/events.py", "ledger/core/state.py"]
    assert (seen["doors"]["AskCallback"], seen["doors"]["RenameProduct"]) == ("agent", "owner")
    assert seen["tools"]["ask_callback"] == "AskCallback" and "rename_product" not in seen["tools"]
    assert "ask_callback" in seen["mcp"] and "rename_product" not in seen["mcp"]
    assert seen["description"].startswith("Ask the owner to call the customer back. Needs customer_id known.")
    assert seen["when"].startswith("When the customer wants to be called. Optional.")
    assert seen["gated"] == [["customer_id"], ["when"]]
    assert seen["words"] == ["Ask for a call back", "Rename a product"]
    assert (seen["command_of"]["CallbackAsked"], seen["command_of"]["EscalationRaised"]) == ("AskCallback", "Escalate")
    asked = seen["asked"]
    assert (asked["status"], asked["events"], asked["escalated"]) == ("accepted", ["CallbackAsked", "EscalationRaised"], True)
    assert list(asked)[-1] == "escalation_id" and asked["escalation_id"] == "esc-id-1"
    assert (seen["unknown"]["status"], seen["unknown"]["fields"], seen["unknown"]["escalation_id"]) == (
        "blocked", ["customer_id"], None)
    assert (seen["wrong_door"]["status"], seen["wrong_door"]["reason"]) == ("blocked", "not_permitted")
    assert (seen["renamed"]["status"], seen["renamed"]["events"], seen["name_now"]) == (
        "accepted", ["ProductRenamed"], "Long rice")


def _named(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def lists_of_command_types(source: str) -> list[int]:
    """The lines of every list, tuple, set or dict written with two command types or more among
    its own items (by name: a string, or the model's class)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        items: list[ast.AST | None] = []
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = [*node.keys, *node.values]
        if sum(1 for item in items if item is not None and _named(item) in COMMAND_TYPES) >= 2:
            found.append(node.lineno)
    return found


def test_no_product_file_but_the_models_and_the_rules_writes_out_a_list_of_command_types():
    # given: every module of the product
    lists = {rel: lines for rel, text in product_files(ROOT) if (lines := lists_of_command_types(text))}
    # then: only the models (the doors' unions) and the rules (their table), and the oracles
    assert LISTS_ALLOWED <= lists.keys()
    assert lists.keys() <= LISTS_ALLOWED | ORACLES.keys(), {
        rel: lines for rel, lines in lists.items() if rel not in LISTS_ALLOWED | ORACLES.keys()}


def test_a_list_of_command_types_is_found_as_strings_or_as_models():
    # given / when / then
    assert lists_of_command_types('WORDS = {"PlaceOrder": "Order", "Restock": "Restock"}') == [1]
    assert lists_of_command_types("RULES = {m.PlaceOrder: place, m.Escalate: escalate}") == [1]
    assert lists_of_command_types('if kind == "PlaceOrder": pass\nPAGES = {"limit": ("x", "SetPrice")}') == []


def test_the_oracles_own_required_facts_are_the_models_for_every_type_they_name():
    # given: the fuzzer's and the simulation's reading of the contract, written out by hand
    from consumers.agent.fuzz import REQUIRED as fuzzed
    from sim.model import REQUIRED as simulated
    # then: where they name a type, they agree with its model
    for oracle in (fuzzed, simulated):
        assert {kind: tuple(names) for kind, names in oracle.items()} == {
            kind: COMMAND_TYPES[kind].model_fields["facts"].annotation.required_names() for kind in oracle}


def test_every_event_an_agent_type_opens_with_is_an_event_and_names_one_type():
    # given: each agent type's first events, as its model declares them
    declared = [event for model in AGENT_TYPES.values() for event in model.first_events]
    # then
    assert set(declared) <= ev.Event.registry.keys()
    assert len(declared) == len(set(declared))
