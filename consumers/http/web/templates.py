"""The HTML, as plain Python functions over escaped strings: no template engine, no build step.

Every value that came from the log or a request goes through `e` (html.escape), attributes
included; only the markup written here is trusted.
"""
from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any
from urllib.parse import urlencode

import orjson

from consumers.money import AMOUNTS, money
from consumers.http.web.pages import Blocks

NAV = (("queue", "/", "Queue"), ("blocks", "/blocks", "Blocks"), ("intents", "/intents", "Intents"),
       ("orders", "/orders", "Orders"))

STYLE = """
*{box-sizing:border-box}
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1c1c1c;background:#f6f6f4;overflow-wrap:break-word}
code{overflow-wrap:anywhere}
header{display:flex;flex-wrap:wrap;gap:.3em 1.2em;align-items:center;padding:.6em 1em;background:#1f3b4d;color:#fff}
header a{color:#cfe3ee;text-decoration:none}header a.on{color:#fff;font-weight:600;border-bottom:2px solid #fff}
header .who{margin-left:auto;opacity:.85;font-size:.9em}main{padding:1em;max-width:70em}
h1{font-size:1.3em;margin:.2em 0 .8em}h2{font-size:1.1em}
.notice{background:#fff7d6;border:1px solid #e6d27a;padding:.5em .8em;margin-bottom:1em}
.item{background:#fff;border:1px solid #ddd;border-left:4px solid #c0392b;padding:.7em 1em;margin-bottom:1em}
.item.acknowledged{border-left-color:#d68910}.meta{color:#555;font-size:.9em}
.badge{display:inline-block;padding:0 .5em;border-radius:1em;font-size:.8em;background:#eee}
.badge.open{background:#fadbd8}.badge.acknowledged{background:#fdebd0}
.badge.blocked,.badge.rejected,.badge.refused{background:#fadbd8}.badge.accepted{background:#d5f5e3}
.scroll{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;width:100%;margin:.4em 0;background:#fff}
td,th{border-bottom:1px solid #e5e5e5;padding:.25em .5em;text-align:left;vertical-align:top;font-size:.9em}
th{background:#f0f0ee}code{font-size:.85em}.fact .source{color:#666;font-size:.85em}.reply{font-style:italic}td.n,th.n{text-align:right;white-space:nowrap}
.held{margin:.6em 0}.held .figures{display:flex;flex-wrap:wrap;gap:.3em 1.5em;margin:.3em 0}.over{color:#a93226;font-weight:600}
.actions{display:flex;flex-wrap:wrap;gap:.5em;margin-top:.6em;align-items:flex-end}.actions form{margin:0}
.actions form.with{display:flex;flex-wrap:wrap;gap:.4em;align-items:flex-end}
.actions label{display:flex;flex-direction:column;font-size:.85em}
input,select,textarea{font:inherit;max-width:100%}input.amount{width:9em}input.note{width:16em}
button{font:inherit;padding:.3em .9em;border:1px solid #888;border-radius:3px;background:#fff;cursor:pointer}
button.approve{background:#1e8449;border-color:#1e8449;color:#fff}
button.resolve,button.raise{border-color:#1e8449}button.dismiss{border-color:#7f8c8d}
form.filters{display:flex;gap:.8em;flex-wrap:wrap;align-items:end;margin-bottom:1em}
form.filters label{display:flex;flex-direction:column;font-size:.85em}.empty{color:#666}table.counts{width:auto}
@media (max-width:640px){
 header .who{margin-left:0;width:100%}
 table.rows tr.head{display:none}table.rows,table.rows tbody,table.rows tr,table.rows td{display:block;width:100%}
 table.rows tr{border-bottom:1px solid #ddd;padding:.3em 0}table.rows td{border:0;padding:.05em .5em;text-align:left}
 table.rows td[data-label]::before{content:attr(data-label) ": ";color:#666;font-size:.85em}
 input.note{width:100%}
}
"""


def e(value: Any) -> str:
    return "" if value is None else escape(str(value), quote=True)


def compact(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def cash(amount: int | None, currency: str | None) -> str:
    """An amount for a page: escaped, and never broken between the currency and the figure."""
    return e(money(amount, currency)).replace(" ", "&nbsp;")


def shown(value: Any, currency: str | None, name: str = "") -> str:
    """A value as a person reads it, escaped: amounts (by their name) in major units with the
    currency, objects as `name: value` pairs, lists comma-separated."""
    if isinstance(value, dict):
        return "; ".join(f"{e(k)}: {shown(v, currency, k)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(shown(v, currency, name) for v in value)
    if name in AMOUNTS and isinstance(value, int) and not isinstance(value, bool):
        return cash(value, currency)
    return e(compact(value))


def table(columns: list[str], rows: list[list[str]], numeric: frozenset[str] = frozenset(), empty: str = "") -> str:
    """Rows of already escaped cells: columns on a wide screen, one card a row on a phone."""
    if not rows:
        return f'<p class="empty">{e(empty)}</p>' if empty else ""
    cls = lambda c: ' class="n"' if c in numeric else ""  # noqa: E731
    head = "".join(f"<th{cls(c)}>{e(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f'<td{cls(c)} data-label="{e(c)}">{v}</td>' for c, v in zip(columns, r))
                   + "</tr>" for r in rows)
    return f'<div class="scroll"><table class="rows"><tr class="head">{head}</tr>{body}</table></div>'


def layout(title: str, business: str, name: str, active: str, body: str, nonce: str, script: str = "") -> str:
    nav = "".join(f'<a href="{href}"{" class=on" if key == active else ""}>{label}</a>' for key, href, label in NAV)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{e(title)} · ledger</title><style nonce="{e(nonce)}">{STYLE}</style></head>'
            f'<body><header><strong>ledger</strong>{nav}<span class="who">{e(business)} · {e(name)}</span></header>'
            f'<main><h1>{e(title)}</h1>{body}</main>{script}</body></html>')


# --- the audit views ------------------------------------------------------------

def _table(columns: list[str], rows: list[dict[str, Any]], empty: str, currency: str | None = None) -> str:
    cells = [[_cell(r[c], c, currency) for c in columns] for r in rows]
    return table(columns, cells, frozenset(columns) & AMOUNTS, empty)


def _cell(value: Any, name: str, currency: str | None) -> str:
    if name == "facts":
        return claimed_facts(value, currency)
    return "" if value is None or value == [] or value == {} else shown(value, currency, name)


def claimed_facts(facts: dict[str, Any] | None, currency: str | None = None) -> str:
    """A command's facts as claimed, one a line: name, what was said, and its source."""
    if not facts:
        return ""
    lines = []
    for name, fact in facts.items():
        fact = fact if isinstance(fact, dict) else {}
        status, source = fact.get("status"), fact.get("source")
        if status == "known":
            said = shown(fact.get("value"), currency, name)
        elif status == "conflict":
            said = "conflict: " + " | ".join(shown(v, currency, name) for v in fact.get("values") or [])
        else:
            said = f"<i>{e(status or 'unknown')}</i>"
        source_html = f' <span class="source">from {e(source)}</span>' if source else ""
        lines.append(f'<span class="fact" data-fact="{e(name)}"><b>{e(name)}</b>: {said}{source_html}</span>')
    return "<br>".join(lines)


def _field(label: str, name: str, value: str | None, kind: str = "text") -> str:
    return f'<label>{e(label)}<input type="{kind}" name="{name}" value="{e(value)}"></label>'


BLOCK_COLUMNS = ["position", "command_id", "agent_id", "conversation_id", "turn_id", "type", "status", "reason",
                 "fields", "details", "facts"]


def blocks_page(found: Blocks, reason: str | None, agent: str | None, field_name: str | None,
                since: str | None, currency: str | None) -> str:
    reasons = sorted(found.counts)
    options = '<option value="">any</option>' + "".join(
        f'<option value="{e(r)}"{" selected" if r == reason else ""}>{e(r)} ({found.counts[r]})</option>'
        for r in reasons)
    form = (f'<form class="filters" method="get" action="/blocks"><label>reason<select name="reason">{options}'
            f'</select></label>{_field("agent", "agent", agent)}{_field("field", "field", field_name)}'
            f'{_field("from date", "since", since, "date")}<button type="submit">Filter</button>'
            f'<a href="/blocks">clear</a></form>')
    counts = _counts(found.counts, agent, field_name, since)
    shown = (f'<p class="meta" id="blocks-matched">{found.matched} matching'
             f'{f", the newest {len(found.rows)} shown" if len(found.rows) < found.matched else ""}.</p>')
    return form + counts + shown + _table(BLOCK_COLUMNS, found.rows, "No blocked or rejected commands match.", currency)


def unsigned_webhooks(hours: list[dict[str, Any]], hours_max: int) -> str:
    """The webhook requests without a valid signature: never in the log, only counted."""
    intro = (f'<h2 id="unsigned-webhooks">Unsigned webhook requests</h2><p class="meta">Answered 401 and not written '
             f'to the log (anyone can send one); counted per hour, the newest {hours_max} hours kept.</p>')
    rows = [{"hour": h["hour"], "requests": h["count"]} for h in reversed(hours)]
    return intro + _table(["hour", "requests"], rows, "None.")


def _counts(counts: Counter, agent: str | None, field_name: str | None, since: str | None) -> str:
    if not counts:
        return ""
    keep = {k: v for k, v in (("agent", agent), ("field", field_name), ("since", since)) if v}
    cells = "".join(f'<tr><td><a href="/blocks?{e(urlencode({**keep, "reason": r}))}">{e(r)}</a></td>'
                    f'<td>{n}</td></tr>' for r, n in counts.most_common())
    return f'<table class="counts"><tr><th>reason</th><th>count</th></tr>{cells}</table>'


def intents_page(conversations: dict[str, list[dict[str, Any]]], conversation: str | None) -> str:
    form = (f'<form class="filters" method="get" action="/intents">'
            f'{_field("conversation", "conversation", conversation)}'
            f'<button type="submit">Show</button><a href="/intents">all</a></form>')
    if not conversations:
        return form + '<p class="empty">No turns yet.</p>'
    parts = [f'<h2><a href="/intents?{e(urlencode({"conversation": c}))}">{e(c)}</a></h2>'
             + _table(["turn_id", "primary_intent", "intents"], turns, "") for c, turns in conversations.items()]
    return form + "".join(parts)


def orders_page(orders: list[dict[str, Any]], status: str | None, currency: str | None) -> str:
    options = '<option value="">any</option>' + "".join(
        f'<option{" selected" if s == status else ""}>{s}</option>' for s in ("open", "partially_paid", "paid"))
    form = (f'<form class="filters" method="get" action="/orders"><label>status<select name="status">{options}'
            f'</select></label><button type="submit">Filter</button></form>')
    totals = {k: sum(o[k] for o in orders) for k in ("total", "paid", "outstanding")}
    summary = (f'<p class="meta" id="orders-totals">{len(orders)} order{"" if len(orders) == 1 else "s"} · '
               f'total {cash(totals["total"], currency)} · paid {cash(totals["paid"], currency)} · '
               f'outstanding {cash(totals["outstanding"], currency)}{"" if currency else " (minor units)"}</p>')
    columns = ["order_id", "customer_id", "total", "paid", "outstanding", "status", "facts"]
    return form + summary + _table(columns, orders, "No orders.", currency)


def message_page(title: str, text: str) -> str:
    """A bare page for refusals: no navigation, nothing of any business."""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title></head>'
            f'<body><h1>{e(title)}</h1><p>{e(text)}</p></body></html>')
