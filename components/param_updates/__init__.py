"""Built-in param updates components."""
