"""How the product's processes start, end and are supervised: the exit codes and the user-error base class
(exit_codes.py, the lowest module of the package: every package may import it, options/ included), and the one
supervisor of child processes (supervisor.py; die_with_parent.py is its exec wrapper). Nothing here imports torch
at module level, so the sweep layer may use it."""
