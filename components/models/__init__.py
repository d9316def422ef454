"""Built-in models components."""
