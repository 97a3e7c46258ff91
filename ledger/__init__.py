"""The write side, in three rooms.

- `ledger.core`: the pure decision: events, the state they fold into, `decide`, the promise
  backstop, outcomes, webhook bodies and the codec. It imports no I/O (no database, threads,
  clock or network); tests/unit/test_architecture.py holds that.
- `ledger.store`: the database: the event log, the hash chain, claims, the rows the writer keeps
  out of memory, snapshots, principals, and every difference between SQLite and PostgreSQL.
- `ledger` itself: the runtime that joins them: `Ledger` (service.py) decides a batch
  (batch.py) against the state cache (states.py) and writes it in one transaction; payment
  links after the commit (links.py, payments.py, providers/); retries and refusals; what-if.
"""
