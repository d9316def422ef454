"""Exceptions of Determined's top level that training code raises."""
from __future__ import annotations


class InvalidHP(Exception):
    """Raise it in a trial's __init__ (or inside `core.init()`) for hyperparameters the model cannot use: the
    trial ends as done (exit 0) without training, as Determined's searcher skips it."""

    def __init__(self, msg: str = "...") -> None:
        if not isinstance(msg, str):
            raise TypeError(f"InvalidHP exception message must be a string, not {type(msg).__name__}")
        self.msg = msg
        super().__init__(msg)
