"""The store: the event log and every table beside it, on SQLite and PostgreSQL. `Store`
(database.py) opens a database and writes a batch in one transaction."""
