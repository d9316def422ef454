"""Built-in meters components."""
