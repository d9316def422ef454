"""Built-in optimizers components."""
