"""Read models rebuilt from events: intents, blocks, orders, escalations, replay."""
