"""Entry point kept from Caffe2's Playground: `python AnyExpOnTerm.py --parameters-json '{"opts": {...}}'`.

It is the same program as `playground run`; see `python AnyExpOnTerm.py --help`.
"""
from playground.cli import exit_command, run_main

if __name__ == "__main__":
    exit_command(run_main())
