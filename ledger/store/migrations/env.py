"""Alembic's environment: the revisions run on the connection `ledger.store.migrations` hands
over, inside the transaction its caller holds (with the schema's lock: `ledger.store.schema`)."""
from alembic import context

connection = context.config.attributes.get("connection")
if connection is None or context.is_offline_mode():
    raise RuntimeError("the ledger's revisions run on a connection: ledger.store.schema.bring_to_head")
context.configure(connection=connection)
with context.begin_transaction():  # the caller's transaction: Alembic begins none of its own
    context.run_migrations()
