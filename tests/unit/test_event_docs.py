"""docs/events.md is generated from the event classes: the committed file cannot drift."""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ledger.core import events as ev
from ledger.core.event_docs import render

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"


def test_the_committed_events_doc_is_what_the_generator_prints():
    assert DOC.read_text(encoding="utf-8") == render(), "run: ledger docs events > docs/events.md"


def test_every_event_type_and_field_has_a_row_with_a_meaning():
    doc = render()
    for name, cls in ev.Event.registry.items():
        assert f"\n## {name}\n" in doc
        for f in dataclasses.fields(cls):
            row = next(line for line in doc.splitlines() if line.startswith(f"| `{f.name}` |"))
            assert row.rstrip(" |").split("|")[-1].strip(), f"{name}.{f.name} has no meaning"
