"""Function-calling definitions of the agent commands, derived from the models the ledger parses with.

A tool is its command type's model: its description the model's `purpose`, its parameters
the command's `facts` only, each described by the fact's hint in the model. The envelope
(`command_id`, `business_id`, `agent_id`, `conversation_id`, `turn_id`, `type`) is the
runtime's: a model should never make up an idempotency key or the tenant. A tool's name is its command type in
snake_case (`PlaceOrder` -> `place_order`), the same in `ledger tools` and over MCP (TOOLS).
`command(...)` wraps a tool call's arguments into the envelope.

The schemas are stricter than the parser, never looser, so anything valid under them
parses: every fact is listed (what the model does not know it must say is `unknown`), a
`known` fact carries a non-empty value of its type and a source, integers are integers with
the model's bounds, and no object takes extra keys.
"""
from __future__ import annotations

import copy
import re
from typing import Any, cast

from pydantic import BaseModel, TypeAdapter
from pydantic.fields import FieldInfo

from commands.facts import Fact, value_type
from commands.models import AGENT_TYPES
from commands.values import Facts

FORMATS = ("openai", "anthropic", "jsonschema")
RUNTIME_FIELDS = ("command_id", "business_id", "agent_id", "conversation_id", "turn_id")

_UNKNOWN_RULE = (
    "Give every fact. For each one say what you know: "
    '{"status": "known", "value": ..., "source": ...} only when you were told it or looked it up '
    '(source: session, message, lookup); {"status": "unknown"} when you do not know it; '
    '{"status": "conflict", "values": [...], "source": ...} when you have several candidates. '
    "Never guess or fill in a plausible value: an unknown fact is a correct answer, "
    "and the ledger blocks the command and tells you what to ask.")

def tool_name(command_type: str) -> str:
    """The tool's name: the command type in snake_case."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", command_type).lower()


# tool name -> command type, for every agent command (generated from the models: none kept by hand)
TOOLS: dict[str, str] = {tool_name(t): t for t in AGENT_TYPES}


def command_type(name: str) -> str | None:
    """The command type a tool name (or the type itself) stands for; None for neither."""
    return TOOLS.get(name) or (name if name in AGENT_TYPES else None)


def _inline(schema: dict[str, Any]) -> dict[str, Any]:
    """Resolve local `$ref`s: some tool APIs take no `$defs`, and ours are small."""
    defs = schema.pop("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            if "$ref" in node:
                return walk(copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]]))
            return {k: walk(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node
    inlined: dict[str, Any] = walk(schema)
    return inlined


def _non_empty(schema: dict[str, Any]) -> dict[str, Any]:
    """A `known` value must not be empty (Fact.known): say so in the schema too."""
    schema = dict(schema)
    kind = schema.get("type")
    if kind == "string":
        schema["minLength"] = max(1, schema.get("minLength", 0))
    elif kind == "array":
        schema["minItems"] = max(1, schema.get("minItems", 0))
    elif kind == "object":
        schema["minProperties"] = max(1, schema.get("minProperties", 0))
    return schema


def _field_text(name: str) -> str:
    return Fact.model_fields[name].description or ""


def value_schema(field: FieldInfo) -> dict[str, Any]:
    """The JSON schema of a known value, from the fact field's value type (what parsing checks)."""
    return _non_empty(_inline(TypeAdapter(value_type(field.metadata)).json_schema()))


def fact_schema(name: str, field: FieldInfo, required: bool) -> dict[str, Any]:
    """A fact's parameter; its description is the fact's hint in the model (else its name)."""
    value = value_schema(field)
    source = {"type": "string", "minLength": 1, "description": _field_text("source")}
    need = "Required: the command is blocked until it is known." if required else "Optional."
    return {
        "description": f"{field.description or name} {need} Status {_field_text('status')}",
        "anyOf": [
            {"type": "object", "additionalProperties": False, "required": ["status", "value", "source"],
             "properties": {"status": {"const": "known"},
                            "value": {**value, "description": _field_text("value")}, "source": source}},
            {"type": "object", "additionalProperties": False, "required": ["status"],
             "properties": {"status": {"const": "unknown"}}},
            {"type": "object", "additionalProperties": False, "required": ["status", "values", "source"],
             "properties": {"status": {"const": "conflict"},
                            "values": {"type": "array", "minItems": 2, "items": value,
                                       "description": _field_text("values")},
                            "source": source}},
        ],
    }


def facts_model(command_type: str) -> type[Facts]:
    return cast("type[Facts]", AGENT_TYPES[command_type].model_fields["facts"].annotation)


def facts_schema(command_type: str) -> dict[str, Any]:
    """A tool's parameters: every fact of the type, each a Fact of the model's value type."""
    model = facts_model(command_type)
    needed = set(model.required_names())
    names = list(model.model_fields)
    return {"type": "object", "additionalProperties": False, "required": names,
            "properties": {n: fact_schema(n, model.model_fields[n], n in needed) for n in names}}


def command_schema(command_type: str) -> dict[str, Any]:
    """The whole command as the ledger's agent door takes it: the model's envelope, our facts."""
    model: type[BaseModel] = AGENT_TYPES[command_type]
    schema = _inline(model.model_json_schema())
    schema["properties"]["facts"] = facts_schema(command_type)
    schema["additionalProperties"] = False
    schema["description"] = AGENT_TYPES[command_type].purpose
    return schema


def description(command_type: str) -> str:
    required = facts_model(command_type).required_names()
    needs = f"Needs {', '.join(required)} known." if required else "Never blocked for unknown facts."
    return f"{AGENT_TYPES[command_type].purpose} {needs} {_UNKNOWN_RULE}"


def definitions(fmt: str, types: tuple[str, ...] = tuple(AGENT_TYPES)) -> Any:
    if fmt == "openai":
        return [{"type": "function", "function": {
            "name": tool_name(t), "description": description(t), "parameters": facts_schema(t)}} for t in types]
    if fmt == "anthropic":
        return [{"name": tool_name(t), "description": description(t), "input_schema": facts_schema(t)} for t in types]
    if fmt == "jsonschema":
        return {t: command_schema(t) for t in types}
    raise ValueError(f"unknown format {fmt!r}; one of {', '.join(FORMATS)}")


def command(name: str, arguments: dict[str, Any], *, command_id: Any, business_id: str,
            agent_id: str, conversation_id: str, turn_id: str) -> dict[str, Any]:
    """A tool call's arguments (tool `name`, or the command type) wrapped in the envelope the
    runtime owns; ready for the ledger."""
    return {"command_id": command_id, "type": command_type(name) or name, "business_id": business_id,
            "agent_id": agent_id, "conversation_id": conversation_id, "turn_id": turn_id,
            "facts": arguments}
