"""The contract's limits (section 11), each named once: every gate, column and reader
that needs one imports it from here."""
from __future__ import annotations

id_chars_max = 128              # command, business, agent, conversation, turn and id facts
text_chars_max = 4096           # free text: name, note, reason, reply
line_bytes_max = 1_048_576      # one line of a file or one Kafka message
amount_max = 2**53 - 1          # every amount and every sum kept: the largest integer JSON readers keep exact
raw_excerpt_bytes_max = 1024    # the raw input a CommandRejected keeps
json_depth_max = 64             # objects and arrays inside each other: deeper is malformed (our choice; see docs/contract.md)
