"""`import candle` for a CANDLE script that playground runs while candle_lib is not installed.

playground/candle/runner.py puts this folder first on sys.path only in that case; the module then becomes
playground.compat.candle, playground's implementation of the part of candle_lib's API benchmarks use.
"""
import sys

import playground.compat.candle as _implementation

sys.modules[__name__] = _implementation
