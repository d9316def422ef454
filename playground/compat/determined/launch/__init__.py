"""`determined.launch`: Determined's launch layer, for scripts that start their workers themselves.

As an entrypoint prefix (`python3 -m determined.launch.torch_distributed ... SCRIPT`) the runner understands
it and starts one process per slot itself (playground/determined/entrypoint.py). These modules are for what a
process started once per node runs: `python3 -m determined.launch.wrap_rank RANK -- CMD...` (the worker's
output, each line prefixed with its rank) and `python3 -m determined.launch.torch_distributed [--] CMD...` (one
worker per slot of this node, with torchrun's variables).
"""
