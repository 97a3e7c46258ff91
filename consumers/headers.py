"""Message headers more than one door reads."""

# The agent's (or owner's) token on the ledger's command topics (CONTRACT 13): never copied to
# any other topic. Read by the doors' gates (agent_door.py, owner_door.py) and the Kafka door.
TOKEN_HEADER = "ledger-token"
