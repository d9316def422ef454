"""Built-in components, grouped by kind; each module is registered by name in module_map.py."""
