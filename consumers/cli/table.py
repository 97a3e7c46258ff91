"""Readable output for people: one line an outcome, or an aligned table of rows.

Amounts are shown in major units with the business's currency (consumers/money.py).
"""
from __future__ import annotations

import itertools
import sys
from collections.abc import Iterable
from typing import Any

table_rows_measured = 1000
from consumers.money import AMOUNTS, money

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
    return head + ("\n    " + "; ".join(bits) if bits else "")


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
    widths = [min(40, max(len(c), *(len(row[i]) for row in cells))) for i, c in enumerate(columns)]
    sys.stdout.write(_line(columns, widths) + "\n" + "  ".join("-" * w for w in widths) + "\n")
    for row in itertools.chain(cells, map(cells_of, rows)):
        sys.stdout.write(_line(row, widths) + "\n")


def _line(values: list[str], widths: list[int]) -> str:
    """Cells cut and padded to their widths, but the last printed whole: nothing follows it."""
    padded = [v[:w].ljust(w) for v, w in zip(values[:-1], widths)]
    return "  ".join([*padded, values[-1]]).rstrip()


def _cell(value: Any, name: str = "", currency: str | None = None) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return ",".join(_cell(v, "", currency) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={_cell(v, k, currency)}" for k, v in value.items())
    if name in AMOUNTS and isinstance(value, int) and not isinstance(value, bool):
        return money(value, currency)
    return str(value)
