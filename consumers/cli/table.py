"""Readable output for people: one line an outcome, or an aligned table of rows.

Amounts are shown in major units with the business's currency (consumers/money.py). Every
value reaches the terminal through `printable`: text from the log (a reason, a fact's
source, a rejected line's excerpt) is anyone's, and must not steer the terminal. A cell cut
to its column's width ends in `…`, so a cut never passes for the whole value.
"""
from __future__ import annotations

import itertools
import sys
import unicodedata
from collections.abc import Iterable
from typing import Any

from consumers.money import AMOUNTS, money

table_rows_measured = 1000
column_chars_max = 40
cut_mark = "…"
# Characters a terminal may act on or that show as nothing: controls (C0, DEL, C1: ESC and
# so every CSI, OSC 8 link and OSC 52 clipboard sequence; CR, LF, TAB), format characters
# (bidi overrides and isolates, zero-width ones), lone surrogates, line and paragraph
# separators, unassigned code points. Shown as their escapes (`\x1b`, `\u202e`) instead.
HIDDEN = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp", "Cn"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}

_MARK = {"accepted": "✓", "blocked": "✗", "rejected": "!"}


def describe(o: dict[str, Any], currency: str | None = None) -> str:
    mark = _MARK.get(o.get("status", ""), "?")
    head = f"{mark} {o.get('command_id') or '-'} {o.get('type') or '(unreadable)'}: {o.get('status')}"
    if o.get("duplicate"):
        head += " (duplicate)"
    if o.get("reason"):
        head += f" [{o['reason']}]"
    bits = []
    if o.get("fields"):
        bits.append("needs " + ", ".join(o["fields"]))
    if o.get("conflicts"):
        bits.append("conflicting " + "; ".join(f"{k}: {' vs '.join(map(str, v))}" for k, v in o["conflicts"].items()))
    details = o.get("details") or {}
    for line in details.get("lines", []):
        bits.append(f"{line['sku']}: asked {line['requested']}, only {line['available']} left")
    if "credit_limit" in details:
        bits.append(f"limit {money(details['credit_limit'], currency)}, owes {money(details['exposure'], currency)}, "
                    f"order {money(details['order_total'], currency)}")
    if details.get("skus"):
        bits.append("no such product: " + ", ".join(details["skus"]))
    if details.get("error"):
        bits.append(details["error"])
    if o.get("order_id"):
        bits.append(f"order {o['order_id']} total {money(o['total'], currency)}")
    if "PaymentLinkVoided" in o.get("events", []):
        bits.append("voided the old link")
    if o.get("payment_link"):
        link = o["payment_link"]
        bits.append(f"{'resent' if o.get('reused') else 'link'} {link['reference']} for {money(link['amount'], currency)}")
    if o.get("escalated"):
        bits.append(f"escalated {o.get('escalation_id')}")
    return printable(head) + ("\n    " + "; ".join(map(printable, bits)) if bits else "")


def print_outcome(o: dict[str, Any], currency: str | None = None) -> None:
    sys.stdout.write(describe(o, currency) + "\n")


def print_table(rows: Iterable[dict[str, Any]], columns: list[str] | None = None,
                currencies: dict[str, str] | None = None) -> None:
    """Rows as aligned columns. Widths come from the first `table_rows_measured` rows, so a
    long stream (`ledger events --table`) is printed as it comes, in constant memory.
    `currencies`: business_id -> ISO 4217, for the amounts of each row's business."""
    rows = iter(rows)
    first = list(itertools.islice(rows, table_rows_measured))
    if not first:
        sys.stdout.write("(no rows)\n")
        return
    columns = columns or list(first[0])
    cells_of = lambda r: [_cell(r.get(c), c, (currencies or {}).get(r.get("business_id"))) for c in columns]  # noqa: E731
    cells = [cells_of(r) for r in first]
    widths = [min(column_chars_max, max(len(c), *(len(row[i]) for row in cells))) for i, c in enumerate(columns)]
    sys.stdout.write(_line(columns, widths) + "\n" + "  ".join("-" * w for w in widths) + "\n")
    for row in itertools.chain(cells, map(cells_of, rows)):
        sys.stdout.write(_line(row, widths) + "\n")


def _line(values: list[str], widths: list[int]) -> str:
    """Cells cut and padded to their widths, but the last printed whole: nothing follows it."""
    padded = [cut(v, w).ljust(w) for v, w in zip(values[:-1], widths)]
    return "  ".join([*padded, values[-1]]).rstrip()


def cut(text: str, width: int) -> str:
    """`text` in at most `width` characters; a cut one ends in the cut mark."""
    return text if len(text) <= width else text[:width - 1] + cut_mark


def printable(text: str) -> str:
    """`text` with every character in HIDDEN spelled as its escape: what a terminal shows
    is what the value holds, and nothing in it reaches the terminal as a command."""
    if text.isprintable():  # in C: every character visible, a plain space the only blank
        return text
    return "".join(_escape(ch) if unicodedata.category(ch) in HIDDEN else ch for ch in text)


def _escape(ch: str) -> str:
    n = ord(ch)
    return _NAMED.get(ch) or (f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}")


def _cell(value: Any, name: str = "", currency: str | None = None) -> str:
    return printable(_text(value, name, currency))


def _text(value: Any, name: str = "", currency: str | None = None) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ",".join(_text(v, "", currency) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={_text(v, k, currency)}" for k, v in value.items())
    if name in AMOUNTS and isinstance(value, int) and not isinstance(value, bool):
        return money(value, currency)
    return str(value)
