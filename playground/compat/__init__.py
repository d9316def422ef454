"""Compatibility layers: other tools' APIs mapped onto playground's public surface.

Each layer is a package of its own (`candle/`: candle_lib's API for CANDLE benchmark scripts). The core never
imports them; a layer is put in reach only of the processes that need it (see each layer's docstring).
"""
