"""Built-in overrides components."""
