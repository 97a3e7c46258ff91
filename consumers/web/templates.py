"""The HTML, as plain Python functions over escaped strings: no template engine, no build step.

Every value that came from the log or a request goes through `e` (html.escape), attributes
included; only the markup written here is trusted.
"""
from __future__ import annotations

from collections import Counter
from html import escape
from typing import Any
from urllib.parse import quote, urlencode

import orjson

from consumers.web.pages import Blocks, Item, TurnCommand, event_details

CAUSES = {"agent": "The agent asked for a person", "credit_limit": "Credit limit exceeded",
          "auto_promise": "The reply promised a human follow-up"}
NAV = (("queue", "/", "Queue"), ("blocks", "/blocks", "Blocks"), ("intents", "/intents", "Intents"),
       ("orders", "/orders", "Orders"))
queue_poll_ms = 2000

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1c1c1c;background:#f6f6f4}
header{display:flex;gap:1.2em;align-items:center;padding:.6em 1.2em;background:#1f3b4d;color:#fff}
header a{color:#cfe3ee;text-decoration:none}header a.on{color:#fff;font-weight:600;border-bottom:2px solid #fff}
header .who{margin-left:auto;opacity:.85}main{padding:1em 1.2em;max-width:70em}
h1{font-size:1.3em;margin:.2em 0 .8em}
.notice{background:#fff7d6;border:1px solid #e6d27a;padding:.5em .8em;margin-bottom:1em}
.item{background:#fff;border:1px solid #ddd;border-left:4px solid #c0392b;padding:.7em 1em;margin-bottom:1em}
.item.acknowledged{border-left-color:#d68910}.meta{color:#555;font-size:.9em}
.badge{display:inline-block;padding:0 .5em;border-radius:1em;font-size:.8em;background:#eee}
.badge.open{background:#fadbd8}.badge.acknowledged{background:#fdebd0}
.badge.blocked,.badge.rejected,.badge.refused{background:#fadbd8}.badge.accepted{background:#d5f5e3}
table{border-collapse:collapse;width:100%;margin:.4em 0;background:#fff}
td,th{border-bottom:1px solid #e5e5e5;padding:.25em .5em;text-align:left;vertical-align:top;font-size:.9em}
th{background:#f0f0ee}code{font-size:.85em}.reply{font-style:italic}
.actions{display:flex;gap:.5em;margin-top:.5em}.actions form{margin:0}
button{font:inherit;padding:.3em .9em;border:1px solid #888;border-radius:3px;background:#fff;cursor:pointer}
button.resolve{border-color:#1e8449}button.dismiss{border-color:#7f8c8d}
form.filters{display:flex;gap:.8em;flex-wrap:wrap;align-items:end;margin-bottom:1em}
form.filters label{display:flex;flex-direction:column;font-size:.85em}.empty{color:#666}table.counts{width:auto}
"""


def e(value: Any) -> str:
    return "" if value is None else escape(str(value), quote=True)


def compact(value: Any) -> str:
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def layout(title: str, business: str, name: str, active: str, body: str, nonce: str, script: str = "") -> str:
    nav = "".join(f'<a href="{href}"{" class=on" if key == active else ""}>{label}</a>' for key, href, label in NAV)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{e(title)} · ledger</title><style nonce="{e(nonce)}">{STYLE}</style></head>'
            f'<body><header><strong>ledger</strong>{nav}<span class="who">{e(business)} · {e(name)}</span></header>'
            f'<main><h1>{e(title)}</h1>{body}</main>{script}</body></html>')


# --- the queue ------------------------------------------------------------------

def queue_page(items: list[Item], notice: str | None, csrf: str, nonce: str, fingerprint: str,
               new_nonce) -> tuple[str, str]:
    """(body, script): the items, oldest first, and the poll that reloads when the queue changes."""
    top = f'<p class="notice" role="status">{e(notice)}</p>' if notice else ""
    if not items:
        body = top + '<p class="empty" id="queue-empty">Nothing is waiting for a person.</p>'
    else:
        body = top + f'<p class="meta">{len(items)} waiting, oldest first.</p>' + "".join(
            _item(item, csrf, new_nonce()) for item in items)
    script = (f'<script nonce="{e(nonce)}">(function(){{var seen="{e(fingerprint)}";'
              f'setInterval(function(){{fetch("/api/queue",{{credentials:"same-origin",cache:"no-store"}})'
              f'.then(function(r){{return r.ok?r.json():null}}).then(function(j){{'
              f'if(j&&j.fingerprint!==seen){{location.replace("/")}}}}).catch(function(){{}})}},{queue_poll_ms})}})();'
              f'</script>')
    return body, script


def _item(item: Item, csrf: str, form_nonce: str) -> str:
    r = item.row
    esc_id, status = r["escalation_id"], r["status"]
    actions = [("acknowledge", "Acknowledge")] if status == "open" else []
    actions += [("resolve", "Resolve"), ("dismiss", "Dismiss")]
    forms = "".join(
        f'<form method="post" action="/escalations/{e(quote(esc_id, safe=""))}/{action}">'
        f'<input type="hidden" name="csrf" value="{e(csrf)}"><input type="hidden" name="nonce" value="{e(form_nonce)}">'
        f'<button type="submit" class="{action}">{label}</button></form>' for action, label in actions)
    return (f'<article class="item {e(status)}" data-escalation="{e(esc_id)}">'
            f'<div><span class="badge {e(status)}">{e(status)}</span> <b>{e(CAUSES.get(r["cause"], r["cause"]))}</b>'
            f'{": " + e(r["reason"]) if r["reason"] and r["cause"] == "agent" else ""}</div>'
            f'<div class="meta">raised {e(r["raised_at"])} · conversation <code>{e(r["conversation_id"])}</code> '
            f'turn <code>{e(r["turn_id"])}</code> · <code>{e(esc_id)}</code></div>'
            f'{_turn(item.commands)}<div class="actions">{forms}</div></article>')


def _turn(commands: list[TurnCommand]) -> str:
    if not commands:
        return '<p class="empty">No commands in this turn.</p>'
    lines = []
    for c in commands:
        events = "<br>".join(_event(event) for _, event in c.events)
        lines.append(f'<tr><td><code>{e(c.command_id)}</code><br>{e(c.type)}</td><td>{e(c.agent_id)}</td>'
                     f'<td><span class="badge {e(c.status)}">{e(c.status)}</span></td><td>{events}</td></tr>')
    return ('<table class="turn"><tr><th>command</th><th>agent</th><th>outcome</th><th>events</th></tr>'
            + "".join(lines) + "</table>")


def _event(event: Any) -> str:
    details = event_details(event)
    if event.type == "ReplyRecorded":
        return f'ReplyRecorded: <span class="reply">“{e(details.get("reply"))}”</span>'
    shown = "; ".join(f"{e(k)}: {e(compact(v))}" for k, v in details.items())
    return f"{e(event.type)}{': ' + shown if shown else ''}"


# --- the audit views ------------------------------------------------------------

def _table(columns: list[str], rows: list[dict[str, Any]], empty: str) -> str:
    if not rows:
        return f'<p class="empty">{e(empty)}</p>'
    head = "".join(f"<th>{e(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(r[c])}</td>" for c in columns) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _cell(value: Any) -> str:
    return "" if value is None or value == [] or value == {} else e(compact(value))


def _field(label: str, name: str, value: str | None, kind: str = "text") -> str:
    return f'<label>{e(label)}<input type="{kind}" name="{name}" value="{e(value)}"></label>'


BLOCK_COLUMNS = ["position", "command_id", "agent_id", "conversation_id", "turn_id", "type", "status", "reason",
                 "fields", "details"]


def blocks_page(found: Blocks, reason: str | None, agent: str | None, field_name: str | None,
                since: str | None) -> str:
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
    return form + counts + shown + _table(BLOCK_COLUMNS, found.rows, "No blocked or rejected commands match.")


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


def orders_page(orders: list[dict[str, Any]], status: str | None) -> str:
    options = '<option value="">any</option>' + "".join(
        f'<option{" selected" if s == status else ""}>{s}</option>' for s in ("open", "partially_paid", "paid"))
    form = (f'<form class="filters" method="get" action="/orders"><label>status<select name="status">{options}'
            f'</select></label><button type="submit">Filter</button></form>')
    totals = {k: sum(o[k] for o in orders) for k in ("total", "paid", "outstanding")}
    summary = (f'<p class="meta" id="orders-totals">{len(orders)} order{"" if len(orders) == 1 else "s"} · '
               f'total {totals["total"]:,} · '
               f'paid {totals["paid"]:,} · outstanding {totals["outstanding"]:,} (minor units)</p>')
    columns = ["order_id", "customer_id", "total", "paid", "outstanding", "status"]
    return form + summary + _table(columns, orders, "No orders.")


def message_page(title: str, text: str) -> str:
    """A bare page for refusals: no navigation, nothing of any business."""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{e(title)}</title></head>'
            f'<body><h1>{e(title)}</h1><p>{e(text)}</p></body></html>')
