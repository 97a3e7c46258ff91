"""The escalation queue's HTML: each item with its turn, and for a credit-limit block the
order as claimed (priced now) against exposure and limit, with the owner's buttons.

Every value that came from the log or a request goes through `e` or `shown` (escaped).
"""
from __future__ import annotations

from typing import Any
from urllib.parse import quote

from commands.limits import text_chars_max
from consumers.money import money
from consumers.http.web.actions import ACTIONS
from consumers.http.web.held import Held
from consumers.http.web.pages import Item, TurnCommand, event_details
from consumers.http.web.templates import cash, claimed_facts, e, shown, table

CAUSES = {"agent": "The agent asked for a person", "credit_limit": "Credit limit exceeded",
          "auto_promise": "The reply promised a human follow-up"}
queue_poll_ms = 2000


def queue_page(items: list[Item], notice: str | None, csrf: str, nonce: str, fingerprint: str,
               new_nonce, currency: str | None) -> tuple[str, str]:
    """(body, script): the items, oldest first, and the poll that reloads when the queue changes."""
    top = f'<p class="notice" role="status">{e(notice)}</p>' if notice else ""
    if not items:
        body = top + '<p class="empty" id="queue-empty">Nothing is waiting for a person.</p>'
    else:
        body = top + f'<p class="meta">{len(items)} waiting, oldest first.</p>' + "".join(
            _item(item, csrf, new_nonce(), currency) for item in items)
    script = (f'<script nonce="{e(nonce)}">(function(){{var seen="{e(fingerprint)}";'
              f'setInterval(function(){{if(document.activeElement&&document.activeElement.form)return;'
              f'fetch("/api/queue",{{credentials:"same-origin",cache:"no-store"}})'
              f'.then(function(r){{return r.ok?r.json():null}}).then(function(j){{'
              f'if(j&&j.fingerprint!==seen){{location.replace("/")}}}}).catch(function(){{}})}},{queue_poll_ms})}})();'
              f'</script>')
    return body, script


def _item(item: Item, csrf: str, form_nonce: str, currency: str | None) -> str:
    r = item.row
    esc_id, status = r["escalation_id"], r["status"]
    held = _held(item.held, currency) if item.held is not None else ""
    return (f'<article class="item {e(status)}" data-escalation="{e(esc_id)}">'
            f'<div><span class="badge {e(status)}">{e(status)}</span> <b>{e(CAUSES.get(r["cause"], r["cause"]))}</b>'
            f'{": " + e(r["reason"]) if r["reason"] and r["cause"] == "agent" else ""}</div>'
            f'<div class="meta">raised {e(r["raised_at"])} · conversation <code>{e(r["conversation_id"])}</code> '
            f'turn <code>{e(r["turn_id"])}</code> · <code>{e(esc_id)}</code></div>'
            f'{held}{_turn(item.commands, currency)}'
            f'<div class="actions">{_forms(item, csrf, form_nonce, currency)}</div></article>')


def _held(held: Held, currency: str | None) -> str:
    rows = [[f'{e(line.name or "no longer in the catalog")} <code>{e(line.sku)}</code>', e(line.quantity),
             cash(line.unit_price, currency), cash(line.line_total, currency),
             e(line.available)] for line in held.lines]
    over = held.limit_needed - held.credit_limit
    figures = (f'<div class="figures"><span>order <b class="total">{cash(held.total, currency)}</b></span>'
               f'<span>owes <b>{cash(held.exposure, currency)}</b></span>'
               f'<span>limit <b>{cash(held.credit_limit, currency)}</b></span>'
               + (f'<span class="over">over by {cash(over, currency)}</span>' if over > 0 else "") + "</div>")
    who = f'{e(held.customer_name or held.customer_id)} <code>{e(held.customer_id)}</code>'
    note = f'<div class="meta">note: {e(held.note)}</div>' if held.note else ""
    return (f'<section class="held"><div>The order as the agent claimed it, for {who}, at today\'s prices:</div>'
            + table(["product", "quantity", "unit price", "line total", "in stock"], rows,
                    frozenset({"quantity", "unit price", "line total", "in stock"}))
            + figures + note + "</section>")


def _forms(item: Item, csrf: str, form_nonce: str, currency: str | None) -> str:
    esc_id, status = item.row["escalation_id"], item.row["status"]
    hidden = (f'<input type="hidden" name="csrf" value="{e(csrf)}">'
              f'<input type="hidden" name="nonce" value="{e(form_nonce)}">')

    def form(action: str, fields: str = "") -> str:
        return (f'<form method="post" action="/escalations/{e(quote(esc_id, safe=""))}/{action}"'
                f'{" class=with" if fields else ""}>{hidden}{fields}'
                f'<button type="submit" class="{action}">{e(ACTIONS[action].label)}</button></form>')

    parts = []
    if item.held is not None:
        new_limit = _plain(item.held.limit_needed, currency)
        parts += [form("approve"),
                  form("raise", f'<label>new limit{f" ({e(currency)})" if currency else ""}'
                                f'<input class="amount" name="credit_limit" inputmode="decimal" '
                                f'value="{e(new_limit)}" aria-label="new credit limit"></label>')]
    if status == "open":
        parts.append(form("acknowledge"))
    parts.append(form("close", f'<label>note<input class="note" name="note" maxlength="{text_chars_max}" '
                               'placeholder="what was done" aria-label="note"></label>'))
    if item.held is None:
        parts.append(form("dismiss"))
    return "".join(parts)


def _plain(amount: int, currency: str | None) -> str:
    """An amount as typed into a field: major units, no currency, no grouping."""
    if currency is None:
        return str(amount)
    return money(amount, currency).split(" ", 1)[1].replace(",", "")


def _turn(commands: list[TurnCommand], currency: str | None) -> str:
    if not commands:
        return '<p class="empty">No commands in this turn.</p>'
    rows = [[f'<code>{e(c.command_id)}</code><br>{e(c.type)}', e(c.agent_id),
             f'<span class="badge {e(c.status)}">{e(c.status)}</span>',
             claimed_facts(next((x.claimed["facts"] for _, x in c.events if x.claimed), None), currency),
             "<br>".join(_event(event, currency) for _, event in c.events)] for c in commands]
    return table(["command", "agent", "outcome", "facts", "events"], rows)


def _event(event: Any, currency: str | None) -> str:
    details = event_details(event)
    details.pop("claimed", None)  # the order it claimed is shown above, as a person reads it
    if event.type == "ReplyRecorded":
        return f'ReplyRecorded: <span class="reply">“{e(details.get("reply"))}”</span>'
    said = shown(details, currency)
    return f"{e(event.type)}{': ' + said if said else ''}"
