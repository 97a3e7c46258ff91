"""What the promise backstop costs a reply (it runs on every CompleteTurn).

    .venv/bin/python -m bench.backstop

Prints one line a kind of reply: microseconds a call of `promised_follow_up`, after one
warm-up call (the TR39 data is read once a process, on the first reply that is not ASCII).
"""
from __future__ import annotations

import time
import timeit

calls = 2000
REPLIES = [("typical ASCII, 58 chars, no phrase", "Your order of 2 bags of rice is confirmed. Total: 90,000."),
           ("the same with a naira sign", "Your order of 2 bags of rice is confirmed. Total: \u20a690,000."),
           ("disguised promise, 23 chars", "I w\u200bi\u0301ll \uff43\u0430\u00adll you b\u03b1ck"),
           ("4,096 ASCII chars", "x" * 4096),
           ("4,096 Cyrillic chars", "\u0441" * 4096)]


def main() -> None:
    started = time.perf_counter()
    from ledger.core.promises import promised_follow_up
    promised_follow_up("I go c\u0430ll you back")
    print(f"first non-ASCII reply of a process (imports, TR39 data): {(time.perf_counter() - started) * 1e3:.0f} ms")
    for label, reply in REPLIES:
        promised_follow_up(reply)
        per_call = timeit.timeit(lambda: promised_follow_up(reply), number=calls) / calls
        print(f"{label}: {per_call * 1e6:.0f} us")


if __name__ == "__main__":
    main()
