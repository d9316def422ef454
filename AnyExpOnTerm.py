"""Entry point kept from Caffe2's Playground: `python AnyExpOnTerm.py --parameters-json '{"opts": {...}}'`.

It is the same program as `playground run`; see `python AnyExpOnTerm.py --help`.
"""
from playground.processes import held_stop

held_stop.hold()   # first: a scheduler's SIGTERM while the run starts is kept for it, not fatal (held_stop.py)

from playground.cli import exit_command, own_process, run_main  # noqa: E402

own_process()

if __name__ == "__main__":
    exit_command(run_main())
