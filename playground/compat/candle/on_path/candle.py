"""`import candle` for a CANDLE script that playground runs when no other `candle` module can be imported.

playground/candle/script_process.py's finder, last on sys.meta_path, finds this file only then; the module
becomes playground.compat.candle, playground's implementation of the part of candle_lib's API benchmarks use.
"""
import sys

import playground.compat.candle as _implementation

sys.modules[__name__] = _implementation
