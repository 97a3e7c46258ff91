"""The HTTP doors."""
