"""The client of a `sweep serve` proxy: `DeadlineProxy`, Optuna's gRPC storage proxy client with a deadline on every
call, so a proxy that is stopped (SIGSTOP, a hung host) fails the call, to be retried, instead of hanging the agent
for ever. grpc is an extra: nothing is imported until a proxy is opened.
"""
from __future__ import annotations

from functools import partial
from typing import Any

from playground.sweeps.inputs import environment
from playground.sweeps.search._optuna_private import deadline_proxy


def _with_deadline(stub: Any, seconds: float) -> Any:
    """The stub's calls, each with `timeout=seconds` unless given."""
    class Stub:
        def __getattr__(self, name: str) -> Any:
            return partial(getattr(stub, name), timeout=seconds)
    return Stub()


def _deadline(stub: Any) -> Any:
    return _with_deadline(stub, environment.seconds("PLAYGROUND_STORAGE_CALL_S"))


def DeadlineProxy(host: str, port: int) -> Any:  # noqa: N802  a class built on first use (grpc is an extra)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # optuna marks the proxy experimental
        return deadline_proxy(_deadline)(host=host, port=port)
