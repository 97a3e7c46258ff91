"""The pure core: events, state, decide, promises, outcomes. No I/O: no database, thread, clock
or network library is imported here (tests/unit/test_architecture.py)."""
