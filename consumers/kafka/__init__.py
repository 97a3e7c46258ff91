"""The Kafka door: `ledger serve` reads both command topics and answers on `ledger.outcomes`.
Entry points: consumer.Server (the loop), topics.Topics/ensure_topics, relay.Relay, dev_broker (`ledger dev broker`)."""
