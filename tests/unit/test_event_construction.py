"""How an event is made: every type's `__init__` (ledger/core/events.py sets its fields in one
dict) keeps the dataclass's contract: keyword-only, its fields in declaration order (the
order the log stores them in), defaults and fresh factory values, frozen, and the same
TypeError for a field missing or unknown. And the ids the shell stamps are UUIDv7s."""
from __future__ import annotations

import dataclasses
import uuid

import pytest

from ledger.core import events as ev
from ledger.ids import time_ordered_id


def _required(cls: type[ev.Event]) -> dict[str, object]:
    return {f.name: f"v-{f.name}" for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}


@pytest.mark.parametrize("cls", sorted(ev.Event.registry.values(), key=lambda c: c.__name__), ids=lambda c: c.__name__)
def test_an_event_holds_its_fields_in_declaration_order_with_their_defaults(cls):
    # given the required fields only, when the event is made
    event = cls(**_required(cls))
    # then every field is there, in order, defaulted as the dataclass declares
    fields = dataclasses.fields(cls)
    assert list(vars(event)) == [f.name for f in fields]
    for f in fields:
        if f.default is not dataclasses.MISSING:
            assert getattr(event, f.name) == f.default
        elif f.default_factory is not dataclasses.MISSING:
            assert getattr(event, f.name) == f.default_factory()
            assert getattr(event, f.name) is not getattr(cls(**_required(cls)), f.name)  # a fresh one each


def test_an_event_is_frozen_and_refuses_positional_missing_and_unknown_fields():
    given = _required(ev.CommandBlocked)
    event = ev.CommandBlocked(**given)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.reason = "other"  # type: ignore[misc]
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: 'reason'"):
        ev.CommandBlocked(**{k: v for k, v in given.items() if k != "reason"})
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        ev.CommandBlocked(**given, colour="red")
    with pytest.raises(TypeError, match="positional"):
        ev.CommandBlocked("shop-1", **given)  # type: ignore[misc]


def test_an_event_made_again_with_one_field_changed_keeps_the_rest():
    event = ev.PaymentLinkIssued(**_required(ev.PaymentLinkIssued))
    changed = dataclasses.replace(event, url="https://pay.example/1")
    assert vars(changed) == {**vars(event), "url": "https://pay.example/1"}


def test_an_id_is_a_uuid7_led_by_the_millisecond_and_never_repeats():
    ids = [time_ordered_id() for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    for text in ids[:2_000]:
        parsed = uuid.UUID(text)
        assert (str(parsed), parsed.version, parsed.variant) == (text, 7, uuid.RFC_4122)
    milliseconds = [uuid.UUID(text).int >> 80 for text in ids]
    assert milliseconds == sorted(milliseconds)
    assert {text[19] for text in ids} == set("89ab")  # the variant's digit, its two random bits all seen
