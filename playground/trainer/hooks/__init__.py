"""The built-in hooks, one per file; hook_list.py decides which a run gets and in what order."""
