"""A deterministic simulation of the whole ledger under one seed (docs/sim.md)."""
