"""The MCP door reads each JSON-RPC message as it came (consumers/mcp/duplicates.py): a tools/call
that gives a key twice goes on with the keys named in its _meta; anything else goes on untouched."""
import json

from consumers.mcp.duplicates import DUPLICATE_META, marked, repeated

CALL = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"place_order","arguments":%s}}'


def test_a_call_said_once_goes_on_byte_for_byte():
    raw = CALL % b'{"a":1,"b":{"a":2}}'
    assert marked(raw) == raw


def test_a_call_giving_a_key_twice_names_it_in_its_meta():
    out = json.loads(marked(CALL % b'{"a":1,"a":2}'))
    assert repeated(out["params"]["_meta"]) == ["a"]


def test_a_repeat_in_the_meta_itself_is_found_and_the_meta_kept():
    raw = (b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{},'
           b'"_meta":{"ledger/turn_id":"t-1","ledger/turn_id":"t-2"}}}')
    meta = json.loads(marked(raw))["params"]["_meta"]
    assert (meta["ledger/turn_id"], meta[DUPLICATE_META]) == ("t-2", ["ledger/turn_id"])


def test_a_batch_marks_each_call_in_it():
    raw = b'[%s, %s]' % (CALL % b'{"a":1,"a":2}', CALL % b'{}')
    assert [repeated(m["params"].get("_meta")) for m in json.loads(marked(raw))] == [["a"], ["a"]]


def test_other_messages_and_what_is_not_json_go_on_untouched():
    for raw in (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":1,"x":2}}', b"not json", b"",
                CALL % b'{"n":123456789012345678901234567890,"n":1}'.replace(b'"n":1}', b'"m":1}')):
        assert marked(raw) == raw


def test_an_integer_past_64_bits_and_a_repeat_still_mark():
    out = json.loads(marked(CALL % b'{"n":123456789012345678901234567890,"n":1}'))
    assert repeated(out["params"]["_meta"]) == ["n"]


def test_a_meta_naming_no_keys_is_no_repeat():
    assert repeated({}) is None and repeated({DUPLICATE_META: []}) is None and repeated(None) is None
