"""The pages' HTML: Jinja2 templates (consumers/http/web/templates/) with autoescape on, so a
value from the log or a request is escaped unless a template says otherwise (none does).

The filters say things as a person reads them: money in the business's currency, times in
the business's time zone ("today 14:05"), codes as words.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from consumers.http.web import words
from consumers.http.web.pages import event_details
from consumers.money import AMOUNTS, money

TEMPLATES = Path(__file__).with_name("templates")
# No business sets a time zone yet (no command does): pages show UTC, and say so.
zone_name = "UTC"


def when(recorded_at: str | None, now: datetime | None = None) -> str:
    """"today 14:05", "yesterday 09:12", "3 Dec 14:05", "3 Dec 2025 14:05" (UTC)."""
    if not recorded_at:
        return ""
    try:
        at = datetime.fromisoformat(recorded_at.replace("Z", "+00:00")).astimezone(UTC)
    except ValueError:
        return recorded_at
    today = (now or datetime.now(UTC)).date()
    clock = at.strftime("%H:%M")
    if at.date() == today:
        return f"today {clock}"
    if at.date() == today - timedelta(days=1):
        return f"yesterday {clock}"
    day = f"{at.day} {at.strftime('%b')}"
    return f"{day} {clock}" if at.year == today.year else f"{day} {at.year} {clock}"


def plain(amount: int | None, currency: str | None) -> str:
    """An amount as typed into a field: major units, no currency, no grouping."""
    if amount is None:
        return ""
    shown = money(amount, currency)
    return (shown.split(" ", 1)[1] if currency else shown).replace(",", "")


def said(value: Any, name: str = "", currency: str | None = None) -> str:
    """A fact's or a detail's value as a person reads it: money by its name, lists with commas,
    objects as `name: value` pairs, anything else as compact JSON."""
    if isinstance(value, dict):
        return "; ".join(f"{words.field(k)}: {said(v, k, currency)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(said(v, name, currency) for v in value)
    if name in AMOUNTS and isinstance(value, int) and not isinstance(value, bool):
        return money(value, currency)
    return value if isinstance(value, str) else orjson.dumps(value).decode()


def event_text(event: Any, currency: str | None = None) -> str:
    """An event in a line: its type, then its own fields as a person reads them."""
    details = event_details(event)
    if event.type == "ReplyRecorded":
        return f"Reply recorded: “{details.get('reply', '')}”"
    shown = said(details, currency=currency)
    return f"{event.type}: {shown}" if shown else event.type


def environment() -> Environment:
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, undefined=StrictUndefined,
                      trim_blocks=True, lstrip_blocks=True,
                      auto_reload=False)  # templates ship with the package: compiled once, not checked a request
    env.filters.update(money=money, when=when, plain=plain, said=said, reason=words.reason,
                       status=words.status, cause=words.cause, intent=words.intent, field=words.field,
                       kind=words.kind, event=event_text)
    env.globals.update(zone_name=zone_name)
    return env


_ENV = environment()


def render(template: str, **context: Any) -> str:
    return _ENV.get_template(template).render(**context)
