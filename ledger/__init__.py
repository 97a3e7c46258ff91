"""The write side: events, state, the pure decision, the store."""
