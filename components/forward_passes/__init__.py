"""Built-in forward passes components."""
