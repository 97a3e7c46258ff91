"""The doors: command line, Kafka consumers and producers, the webhook."""
