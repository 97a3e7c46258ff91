"""The agent's side: what an agent's own code imports to send commands and read the answers.
Entry points: tools.LedgerTools (gated tools), gate.side_effect, next_step.next_step, client.LedgerClient; fuzz.run."""
