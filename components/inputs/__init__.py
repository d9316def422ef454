"""Built-in inputs components."""
