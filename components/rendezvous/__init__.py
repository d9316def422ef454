"""Built-in rendezvous components."""
