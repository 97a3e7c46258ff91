"""Section 11's limits at the gate: ids, free text, and what a rejection keeps."""
from __future__ import annotations


import pytest

from commands.parsing import Parsed, Rejection, parse
from commands.limits import id_chars_max, json_depth_max, raw_excerpt_bytes_max, text_chars_max
from commands.parsing import Oversized, excerpt
from tests.builders import command, customer, deep_escalation, known, line, raw

# Invisible ones too (commands/invisible.py): "shop-1" + U+200B is not a second "shop-1", and
# U+202E would turn an id around as it is shown.
INVISIBLE_IN_IDS = ["shop-1\u200b", "\u202eevil", "a\u2066b", "a\u200eb", "a\u061cb", "\ufeffshop-1",
                    "a\u00adb", "a\u034fb", "a\ufe0fb", "a\U000e0100b", "a\u17b4b", "a\u180bb", "\u3164",
                    "a\u115fb", "a\uffa0b", "a\u2060b", "a\U000e0041b", "a\u0600b", "\u200b"]
BAD_IDS = ["x" * (id_chars_max + 1), "", " ", " \t ", "\u3000", "a\x00b", "a\x1fb", "a\x7fb", "a\x85b", "a\nb",
           *INVISIBLE_IN_IDS]
GOOD_IDS = ["x" * id_chars_max, "é-商店-🛒", " padded ", "a\u2800b", "c\u20ddall"]


def escalate(**envelope) -> dict:
    cmd = command("Escalate", {"reason": known("why", "message")})
    cmd.update(envelope)
    return cmd


@pytest.mark.parametrize("field", ["command_id", "business_id"])
@pytest.mark.parametrize("bad", BAD_IDS)
def test_an_envelope_id_that_breaks_the_rule_is_unreadable_and_shown_null(field, bad):
    rejection = parse(raw(escalate(**{field: bad})), "agent")
    assert isinstance(rejection, Rejection) and rejection.reason == "malformed"
    assert getattr(rejection, field) is None


@pytest.mark.parametrize("field", ["agent_id", "conversation_id", "turn_id"])
@pytest.mark.parametrize("bad", BAD_IDS)
def test_an_agent_door_id_that_breaks_the_rule_is_malformed_and_shown_null(field, bad):
    rejection = parse(raw(escalate(**{field: bad})), "agent")
    assert isinstance(rejection, Rejection) and rejection.reason == "malformed"
    assert getattr(rejection, field) is None


@pytest.mark.parametrize("good", GOOD_IDS)
def test_an_id_within_the_rule_is_read_as_given(good):
    parsed = parse(raw(escalate(command_id=good, business_id=good, turn_id=good)), "agent")
    assert isinstance(parsed, Parsed)
    assert (parsed.command.command_id, parsed.command.business_id) == (good, good)


@pytest.mark.parametrize("bad", [b for b in BAD_IDS if b])  # "" is empty: unknown, not malformed
def test_an_id_fact_that_breaks_the_rule_is_malformed(bad):
    rejection = parse(raw(customer(bad, 100)), "owner")
    assert isinstance(rejection, Rejection) and rejection.reason == "malformed"
    assert rejection.command_id is not None


@pytest.mark.parametrize("text", ["x" * text_chars_max, "line one\nline two\t🙂 ναι عربى", "\u202e\x1b[31m", " "])
def test_free_text_keeps_what_a_person_wrote(text):
    parsed = parse(raw(escalate(facts={"reason": known(text, "message")})), "agent")
    assert isinstance(parsed, Parsed)
    assert parsed.command.facts.reason.value == text


@pytest.mark.parametrize("text", ["x" * (text_chars_max + 1), "a\x00b"])
def test_free_text_too_long_or_with_nul_is_malformed(text):
    rejection = parse(raw(escalate(facts={"reason": known(text, "message")})), "agent")
    assert isinstance(rejection, Rejection) and rejection.reason == "malformed"


def test_a_lone_surrogate_is_invalid_json_and_rejected():
    rejection = parse(b'{"command_id": "c-\\ud800", "type": "Escalate", "business_id": "b"}', "agent")
    assert isinstance(rejection, Rejection)
    assert rejection.command_id is None


@pytest.mark.parametrize("given", [b"\x00" * 5000, b"\xff\xfe" * 3000, "\ud800\x00é" * 1000,
                                   b'{"facts": {"\\u0000' + b"\x00" * 2000 + b'": 1}}'])
def test_an_excerpt_is_storable_text_within_the_limit(given):
    text = excerpt(given)
    assert "\x00" not in text
    assert len(text.encode("utf-8")) <= raw_excerpt_bytes_max  # valid UTF-8, no lone surrogate


def test_an_excerpt_of_an_oversized_line_is_of_the_head_it_kept():
    assert excerpt(Oversized(b'{"a": "\x00' + b"x" * 3000, 5_000_000)) == excerpt(b'{"a": "\x00' + b"x" * 3000)


def test_a_rejections_error_is_storable_text_whatever_the_fact_name():
    cmd = escalate(facts={"bad\x00name" * 500: known("x", "message")})
    rejection = parse(raw(cmd), "agent")
    assert isinstance(rejection, Rejection)
    assert "\x00" not in rejection.error and len(rejection.error.encode()) <= raw_excerpt_bytes_max


def test_an_integer_past_64_bits_reaches_the_command_exactly():
    # given: a customer's name in conflict between an integer past 64 bits and a word
    # (+ 1: 2**70 itself is a float exactly, and would compare equal)
    cmd = customer("cust-1", 1000)
    cmd["facts"]["name"] = {"status": "conflict", "values": [2**70 + 1, "Ann"], "source": "message"}
    # when: it is read
    parsed = parse(raw(cmd), "owner")
    # then: the model, the facts as claimed and the canonical content hold the integer itself
    assert isinstance(parsed, Parsed)
    assert parsed.command.facts.name.values[0] == 2**70 + 1
    assert type(parsed.command.facts.name.values[0]) is int
    assert parsed.claimed["facts"]["name"]["values"][0] == 2**70 + 1
    assert b"1180591620717411303425" in parsed.content
    assert parse(raw(cmd), "owner").content == parsed.content


@pytest.mark.parametrize("depth", [json_depth_max, 990, 1010])
@pytest.mark.parametrize("digits", ["1", "12345678901234567890123"])
def test_a_document_nested_past_the_limit_is_malformed_with_its_envelope(depth, digits):
    # given: an escalation whose reason is in conflict with a value nested `depth` deep inside
    # the command's own 4 levels (a run of 20 digits makes the standard library read it too,
    # which gives up near 1,000 levels)
    document, command_id = deep_escalation(depth, digits)
    # when: it is read
    rejection = parse(document, "agent")
    # then: rejected malformed, not raised, its envelope readable
    assert isinstance(rejection, Rejection) and rejection.reason == "malformed"
    assert rejection.command_id == command_id


def test_a_document_within_the_depth_limit_is_read():
    document, _ = deep_escalation(json_depth_max - 4, "1")
    assert isinstance(parse(document, "agent"), Parsed)


# --- a JSON object with a key twice says two things: malformed on every door (issue 28) -------

def _twice(cmd: dict, key: str, first: str) -> bytes:
    """`cmd` as JSON with `key` written first as `first`, then as the command has it."""
    text = raw(cmd)
    text = text if isinstance(text, bytes) else text.encode()
    return text.replace(b'"' + key.encode() + b'":', b'"' + key.encode() + b'":' + first.encode() + b',"' +
                        key.encode() + b'":', 1)


@pytest.mark.parametrize("key", ["business_id", "command_id", "agent_id", "turn_id"])
def test_an_envelope_id_given_twice_is_malformed_and_shown_null(key):
    cmd = escalate(business_id="shop-2")
    rejection = parse(_twice(cmd, key, '"shop-1"'), "agent")
    assert isinstance(rejection, Rejection) and rejection.reason == "malformed"
    assert getattr(rejection, key) is None
    assert "duplicate key" in rejection.error


@pytest.mark.parametrize("key, first", [("type", '"PlaceOrder"'), ("facts", "{}"), ("reason", '{"status":"unknown"}'),
                                        ("value", '"a: b"'), ("status", '"unknown"'), ("source", '"x"')])
def test_a_key_given_twice_anywhere_is_malformed(key, first):
    rejection = parse(_twice(escalate(), key, first), "agent")
    assert isinstance(rejection, Rejection) and rejection.reason == "malformed"
    assert rejection.business_id == "shop-1"


def test_a_key_twice_is_malformed_even_at_a_door_that_does_not_take_the_type():
    rejection = parse(_twice(escalate(), "business_id", '"shop-1"'), "owner")
    assert isinstance(rejection, Rejection) and rejection.reason == "malformed"


def test_a_key_twice_inside_an_order_line_is_malformed():
    cmd = command("PlaceOrder", {"customer_id": known("cust-1", "session"), "lines": known([line("rice", 1)], "m")})
    rejection = parse(_twice(cmd, "quantity", "1000"), "agent")
    assert isinstance(rejection, Rejection) and rejection.reason == "malformed"


@pytest.mark.parametrize("text", ["12:00, at: the door", "a\\u003ab", "\\u003A:", '\\":\\"', "x\\\\"])
def test_colons_and_escapes_in_text_are_no_duplicate(text):
    body = raw(escalate()).replace(b'"why"', b'"' + text.encode() + b'"')
    assert isinstance(parse(body, "agent"), Parsed)


def test_the_same_key_in_two_objects_is_no_duplicate():
    cmd = command("PlaceOrder", {"customer_id": known("cust-1", "session"),
                                 "lines": known([line("rice", 1), line("beans", 2)], "m")})
    assert isinstance(parse(raw(cmd), "agent"), Parsed)


def test_a_key_twice_beside_an_escaped_colon_is_still_found():
    # given: the escape writes one colon fewer than the reader keeps, as many as the repeat adds
    body = _twice(escalate(facts={"reason": known("a\u003ab", "message")}), "source", '"x"')
    body = body.replace(b"a:b", b"a\\u003ab")
    rejection = parse(body, "agent")
    assert isinstance(rejection, Rejection) and "duplicate key" in rejection.error
