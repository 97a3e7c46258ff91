"""The Kafka door: `ledger serve` and what it keeps in the database (offsets, outbox, relay)."""
