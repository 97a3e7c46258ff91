"""The log's index on command ids reads the id where `codec.encode` writes it (ledger.log_indexes.py)."""
import dataclasses

from ledger.core import codec, events as ev
from ledger.store.log_indexes import _KEY, _NEXT


def test_every_event_type_starts_with_its_business_command_id_and_time():
    firsts = {name: [f.name for f in dataclasses.fields(kind)][:3] for name, kind in ev.Event.registry.items()}

    assert {name: f for name, f in firsts.items() if f != ["business_id", "command_id", "recorded_at"]} == {}


def test_the_first_command_id_key_in_the_stored_bytes_is_the_events_own():
    sneaky = 'shop-"command_id":"cmd-x","recorded_at":'  # a business id cannot fake the key: its quotes are escaped
    state = codec.encode(ev.ReplyRecorded(
        business_id=sneaky, command_id="cmd-1", recorded_at="t", reply="hi"))

    start = state.index(_KEY) + len(_KEY)
    assert state[start:state.index(_NEXT)] == codec.dumps("cmd-1")
