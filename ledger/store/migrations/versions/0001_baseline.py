"""Baseline: every table the ledger and its doors keep, as the code made them before the schema
had versions. Each is created only where it is missing (IF NOT EXISTS): a database made table by
table by that code is taken over as it is, and stamped at this revision. The projections' tables
are not here: a replay drops and rebuilds them (projections/projector.py, ROWS_VERSION).

Revision 0001, the first.
"""
from alembic import op
import sqlalchemy as sa

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

Int64 = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # on SQLite an INTEGER key is the rowid
Stream = sa.Uuid().with_variant(sa.BINARY(16), "sqlite")  # a stream id: its 16 bytes on SQLite

# The log's indexes for `ledger audit command` (ledger/store/log_indexes.py queries by the same
# expression, which each database matches an index by): the command id cut from the stored JSON,
# and each business's CurrencySet events.
_COMMAND_SQLITE = (
    'CREATE INDEX IF NOT EXISTS "ledger_events_command" ON "ledger_events" ((substr(CAST(state AS BLOB),'
    " instr(CAST(state AS BLOB), X'22636f6d6d616e645f6964223a') + 13,"
    " min(max(instr(CAST(state AS BLOB), X'2c227265636f726465645f6174223a')"
    " - instr(CAST(state AS BLOB), X'22636f6d6d616e645f6964223a') - 13, 0), 600))))")
_COMMAND_POSTGRESQL = (
    'CREATE INDEX IF NOT EXISTS "ledger_events_command" ON "ledger_events" ((substring(state from'
    " position('\\x22636f6d6d616e645f6964223a'::bytea in state) + 13 for"
    " least(greatest(position('\\x2c227265636f726465645f6174223a'::bytea in state)"
    " - position('\\x22636f6d6d616e645f6964223a'::bytea in state) - 13, 0), 600))))")
_CURRENCY = ('CREATE INDEX IF NOT EXISTS "ledger_events_currency" ON "ledger_events" (originator_id, id)'
             " WHERE topic = 'CurrencySet'")


def _table(name: str, *columns: sa.Column | sa.UniqueConstraint) -> None:
    op.create_table(name, *columns, if_not_exists=True)


def _key(name: str, type_: sa.types.TypeEngine) -> sa.Column:
    return sa.Column(name, type_, primary_key=True, autoincrement=False)


def _required(name: str, type_: sa.types.TypeEngine) -> sa.Column:
    return sa.Column(name, type_, nullable=False)


def _log() -> None:
    _table("ledger_events",
           sa.Column("id", Int64, primary_key=True, autoincrement=True),  # the event's position
           _required("originator_id", Stream), _required("originator_version", Int64),
           _required("topic", sa.Text()), _required("state", sa.LargeBinary()))
    op.create_index("ledger_events_aggregate_idx", "ledger_events", ["originator_id", "originator_version"],
                    unique=True, if_not_exists=True)  # one stream version once: the optimistic check
    op.execute(_COMMAND_POSTGRESQL if op.get_bind().dialect.name == "postgresql" else _COMMAND_SQLITE)
    op.execute(_CURRENCY)
    _table("ledger_chain", _key("position", sa.BigInteger()), _required("hash", sa.LargeBinary()))


def _writer() -> None:
    _table("ledger_claims", _key("scope", sa.String(16)), _key("business_id", sa.Text()), _key("key", sa.Text()),
           _required("content_hash", sa.String(64)), _required("outcome", sa.LargeBinary()))
    _table("ledger_orders", _key("business_id", sa.Text()), _key("order_id", sa.Text()),
           _required("customer_id", sa.Text()), _required("total", sa.BigInteger()), _required("paid", sa.BigInteger()),
           sa.Column("link_reference", sa.Text()), sa.Column("link_url", sa.Text()),
           sa.Column("link_amount", sa.BigInteger()))
    _table("ledger_links", _key("business_id", sa.Text()), _key("reference", sa.Text()),
           _required("order_id", sa.Text()))
    _table("ledger_escalations", _key("business_id", sa.Text()), _key("escalation_id", sa.Text()),
           _required("status", sa.Text()))
    _table("ledger_escalated_turns", _key("business_id", sa.Text()), _key("conversation_id", sa.Text()),
           _key("turn_id", sa.Text()), _key("escalation_id", sa.Text()))
    _table("ledger_snapshots", _key("business_id", sa.Text()), _key("code", sa.Text()),
           _required("version", sa.BigInteger()), _required("state", sa.LargeBinary()))
    _table("ledger_unsigned_webhooks", _key("hour", sa.String(20)), _required("count", sa.BigInteger()))


def _principals() -> None:
    _table("ledger_agents", _key("business_id", sa.String(255)), _key("agent_id", sa.String(255)),
           _required("token_sha256", sa.String(64)), _required("commands", sa.Text()),
           _required("registered_at", sa.String(40)), sa.Column("revoked_at", sa.String(40)),
           sa.UniqueConstraint("token_sha256"))
    _table("ledger_owners", _key("business_id", sa.String(255)), _key("name", sa.String(255)),
           _required("token_sha256", sa.String(64)), _required("registered_at", sa.String(40)),
           sa.Column("revoked_at", sa.String(40)), sa.UniqueConstraint("token_sha256"))
    _table("ledger_agents_changes", sa.Column("id", sa.Integer(), primary_key=True),
           _required("count", sa.BigInteger()))


def _doors() -> None:
    _table("ledger_kafka_offsets", _key("group_id", sa.String(255)), _key("topic", sa.String(255)),
           _key("partition", sa.Integer()), _required("offset", sa.BigInteger()),
           _required("fingerprint", sa.String(32)))
    _table("ledger_kafka_outbox", _key("group_id", sa.String(255)), _key("topic", sa.String(255)),
           _key("partition", sa.Integer()), _key("offset", sa.BigInteger()), _required("messages", sa.LargeBinary()))
    _table("ledger_kafka_relay", _key("name", sa.String(255)), _required("position", sa.BigInteger()))
    _table("ledger_notify_positions", _key("name", sa.Text()), _required("position", sa.BigInteger()))
    for deliveries in ("ledger_notify_deliveries", "ledger_notify_closes"):
        _table(deliveries, _key("name", sa.Text()), _key("business_id", sa.Text()), _key("escalation_id", sa.Text()),
               _required("position", sa.BigInteger()), _required("attempts", sa.Integer()),
               sa.Column("status", sa.Integer()), sa.Column("error", sa.Text()), sa.Column("delivered_at", sa.Text()))
    _table("web_sign_in_links", _key("digest", sa.Text()), _required("business_id", sa.Text()),
           _required("name", sa.Text()), _required("expires_at", sa.BigInteger()))


def upgrade() -> None:
    _log()
    _writer()
    _principals()
    _doors()


def downgrade() -> None:
    raise NotImplementedError("the ledger's schema is never taken back below its baseline: restore a backup")
