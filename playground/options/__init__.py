"""The opts: layering, declared keys and their types, the built-in schema, and the component registry."""
