"""Sign-in links kept in the ledger's database, so `ledger web link` (another process, maybe
on another day) can mint one that the running `ledger web` honours.

Only a digest of a link's code is stored, with whom it signs in (business and name) and
until when; redeeming deletes the row in the same statement that finds it, so a link works
once even with two servers on one database. The table is the web's, beside the log: no
event, as a link changes nothing in the business (the owner's clicks after it do).
"""
from __future__ import annotations

import hashlib
import secrets
import time

from sqlalchemy import BigInteger, Column, MetaData, Table, Text, delete, insert, select
from sqlalchemy.engine import Engine

sign_in_link_s_max = 3600  # a minted link works once, within this
metadata = MetaData()
links = Table(
    "web_sign_in_links", metadata,
    Column("digest", Text, primary_key=True),  # sha256 of the code, hex: the code itself is never stored
    Column("business_id", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("expires_at", BigInteger, nullable=False),  # unix seconds
)


def _digest(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8", "backslashreplace")).hexdigest()


def mint(engine: Engine, business_id: str, name: str, now: float | None = None) -> tuple[str, int]:
    """A fresh code for (business, name), and when it expires (unix seconds)."""
    code, now = secrets.token_urlsafe(32), time.time() if now is None else now
    expires = int(now) + sign_in_link_s_max
    with engine.begin() as conn:
        conn.execute(delete(links).where(links.c.expires_at <= int(now)))  # spent by time: nothing to keep
        conn.execute(insert(links).values(digest=_digest(code), business_id=business_id, name=name,
                                          expires_at=expires))
    return code, expires


def redeem(engine: Engine, code: str, now: float | None = None) -> tuple[str, str] | None:
    """(business, name) of a live link's code, which is spent by this; None for any other code."""
    now = time.time() if now is None else now
    with engine.begin() as conn:
        found = conn.execute(select(links.c.business_id, links.c.name, links.c.expires_at)
                             .where(links.c.digest == _digest(code))).first()
        if found is None:
            return None
        spent = conn.execute(delete(links).where(links.c.digest == _digest(code))).rowcount == 1
    return (found.business_id, found.name) if spent and found.expires_at > now else None
