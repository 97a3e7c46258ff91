"""The MCP example (examples/mcp_agent.py): a scripted model's conversation through `ledger mcp`."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import anyio

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "mcp_agent.py"


def test_the_scripted_model_is_blocked_when_vague_then_orders_what_it_looked_up_and_gets_a_link(tmp_path):
    spec = importlib.util.spec_from_file_location("mcp_agent", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    db, token = example.fresh_ledger(str(tmp_path))
    said: list[str] = []

    outcomes = anyio.run(example.converse, db, token, said.append)

    assert [(o["type"], o["status"], o["reason"]) for o in outcomes] == [
        ("PlaceOrder", "blocked", "unknown_facts"), ("PlaceOrder", "accepted", None),
        ("IssuePaymentLink", "accepted", None)]
    assert outcomes[1]["lines"] == [{"sku": "rice-50kg", "quantity": 2, "unit_price": 45000, "line_total": 90000}]
    assert any("Next step: ask" in line for line in said)
