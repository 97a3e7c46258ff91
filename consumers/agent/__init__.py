"""The agent's side: the Python client and tools agents use."""
