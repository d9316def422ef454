"""Errors in the data a run reads, and the original error behind a DataLoader worker's re-raised one.

A `DataError` is the input's fault (a corrupt record under input.bad_record "error", a label outside
input.num_classes): the command prints its message alone, which names the database, record and key. An error
raised inside a loader worker comes back to the rank wrapped ("Caught X in DataLoader worker process 0.
Original Traceback ..."); `worker_error` gives the error the worker raised, as its own type and message.
"""
from __future__ import annotations

import ast

from playground.processes.exit_codes import UserError


class DataError(UserError, ValueError):
    """The data read during the run is unusable; the message names where (database, record, key)."""


_WRAPPED = " in DataLoader worker process "


def worker_error(error: BaseException) -> BaseException:
    """The exception a loader worker raised, rebuilt with its own message; `error` itself when not wrapped."""
    text = str(error)
    if not text.startswith("Caught ") or _WRAPPED not in text.split("\n", 1)[0]:
        return error
    kind = type(error)
    for name in (f"{kind.__module__}.{kind.__qualname__}", kind.__qualname__):
        at = text.rfind(f"\n{name}: ")
        if at >= 0:
            message = text[at + len(name) + 3:].strip()
            break
    else:
        return error
    if issubclass(kind, KeyError):   # printed as its repr: KeyError: 'name'
        try:
            message = ast.literal_eval(message)
        except (ValueError, SyntaxError):
            pass
    try:
        return kind(message)
    except Exception:   # a type whose constructor takes other arguments: keep the wrapped error
        return error
