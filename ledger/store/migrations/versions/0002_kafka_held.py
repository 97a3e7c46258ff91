"""The Kafka door's commands held for the payment provider's answer (consumers/kafka/held.py):
`ledger serve` writes a link command here with the offsets that pass it, and deletes it with
the command's outcome.

Revision 0002, after 0001.
"""
from alembic import op
import sqlalchemy as sa

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table("ledger_kafka_held",
                    sa.Column("group_id", sa.String(255), primary_key=True, autoincrement=False),
                    sa.Column("topic", sa.String(255), primary_key=True, autoincrement=False),
                    sa.Column("partition", sa.Integer(), primary_key=True, autoincrement=False),
                    sa.Column("offset", sa.BigInteger(), primary_key=True, autoincrement=False),
                    sa.Column("record", sa.LargeBinary(), nullable=False),
                    if_not_exists=True)


def downgrade() -> None:
    op.drop_table("ledger_kafka_held")
