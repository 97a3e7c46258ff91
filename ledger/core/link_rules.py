"""A payment link's rules that need no state: its reference, and when a link owed is abandoned. Pure."""
from __future__ import annotations

import hashlib
from datetime import datetime


def link_reference(business_id: str | None, command_id: str | None) -> str:
    """A link's reference, the same however often its command is decided: the provider's
    idempotency key, so one command makes at most one provider transaction. Letters, digits
    and `-` only: every provider takes it as its reference."""
    digest = hashlib.sha256(f"{business_id or ''}\x00{command_id or ''}".encode("utf-8", "surrogatepass"))
    return f"lnk-{digest.hexdigest()[:link_reference_hex_chars]}"


link_reference_hex_chars = 32  # 128 bits: no two commands share one
# A link owed this long without an answer was left by a process that died mid-call (a call
# lasts at most the adapter's timeout, 10 s by default, capped at 120 s).
link_request_abandoned_s = 300


def abandoned(requested_at: str, now: str) -> bool:
    """Pure: both times are the recordings' ISO 8601 UTC stamps."""
    elapsed = datetime.fromisoformat(now.replace("Z", "+00:00")) - datetime.fromisoformat(
        requested_at.replace("Z", "+00:00"))
    return elapsed.total_seconds() > link_request_abandoned_s
