"""What the user hands the product beside the opts schema: the one reader of their files (`user_files.py`) and the
one grammar of a `--set KEY=VALUE` item (`set_items.py`)."""
