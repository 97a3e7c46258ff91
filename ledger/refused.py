"""An input the database refused: answered rejected/malformed (a command) or refused
malformed (a webhook) on its own (CONTRACT 11, storage), in a form the store can hold.
Ledger's write path finds it; this says what it becomes."""
from __future__ import annotations

import dataclasses
import logging

from commands.parsing import NotPermitted, Oversized, Parsed, Rejection, excerpt
from ledger.retry import first_line
from ledger.core.webhook import Payment, Refusal

log = logging.getLogger("ledger")

_PREFIXES = ("storage: ", "internal error: ")


def refusal_text(error: Exception) -> str:
    """The error in one line, cut and cleaned like an excerpt: "storage: ..." for the
    database's refusals; anything else is a fault of ours, answered the same way (no input
    may stop a door) but named as what it is, and logged with its stack."""
    from sqlalchemy.exc import SQLAlchemyError

    from ledger.store.database import PersistenceError
    if isinstance(error, (SQLAlchemyError, PersistenceError, *_driver_errors())):
        kind = "storage"
    else:
        kind = "internal error"
        log.error("deciding a command failed; answered it rejected", exc_info=error)
    return excerpt(f"{kind}: {first_line(error)}")


def fault(raw: bytes | str | Oversized, error: Exception) -> Rejection:
    """An input whose reading failed with a fault of ours: rejected/malformed on its own
    ("internal error: ..."), so the batch around it is decided and no door retries it for ever."""
    return Rejection(error=refusal_text(error), raw=excerpt(raw))


def _driver_errors() -> tuple[type[Exception], ...]:
    """The database drivers' own errors (PostgreSQL's COPY raises psycopg's unwrapped)."""
    import sqlite3

    try:
        import psycopg
    except ImportError:  # no `postgres` extra: no psycopg error can be raised either
        return (sqlite3.Error,)
    return sqlite3.Error, psycopg.Error


def is_refusal(error: str) -> bool:
    return error.startswith(_PREFIXES)


def refused(item: Parsed | NotPermitted | Rejection | Payment | Refusal, raw: bytes | str | Oversized | Rejection,
            error: Exception, batch_error: Exception) -> Rejection | Refusal:
    """The input the database refused, as a rejection (a command) or a refusal (a webhook)."""
    if isinstance(item, (Payment, Refusal)):
        if isinstance(item, Refusal) and is_refusal(item.error):
            raise batch_error  # even its refusal, which keeps no field of the body, is refused
        assert isinstance(raw, bytes)
        return Refusal("malformed", refusal_text(error), excerpt(raw))
    return _refused_command(item, raw, error, batch_error)


def _refused_command(item: Parsed | NotPermitted | Rejection, raw: bytes | str | Oversized | Rejection,
                     error: Exception, batch_error: Exception) -> Rejection:
    """A command's envelope ids passed the gate and are kept; if even that is refused, the
    rejection keeps none of them; if that is refused too, the database refuses everything:
    the batch's error is raised."""
    text = refusal_text(error)
    if isinstance(item, Rejection) and is_refusal(item.error):
        if item.business_id is None and item.command_id is None:
            raise batch_error
        return Rejection(error=text, raw=item.raw)
    if isinstance(item, Rejection):
        return dataclasses.replace(item, error=text)
    head = item.command if isinstance(item, Parsed) else item
    assert not isinstance(raw, Oversized)  # an oversized line is a Rejection before it gets here
    return Rejection(error=text, raw=excerpt(raw), command_id=head.command_id, type=head.type,
                     business_id=head.business_id, agent_id=head.agent_id,
                     conversation_id=head.conversation_id, turn_id=head.turn_id)
