"""Entry point kept from Caffe2's Playground: `python AnyExpOnTerm.py --parameters-json '{"opts": {...}}'`.

It is the same program as `playground run`; see `python AnyExpOnTerm.py --help`.
"""
import sys

from playground.cli import run_main

if __name__ == "__main__":
    sys.exit(run_main())
