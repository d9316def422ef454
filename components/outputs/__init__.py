"""Built-in outputs components."""
