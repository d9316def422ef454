"""torch._dynamo imported only by a run that compiles: 1.3-2 s less start-up for every run that does not.

torch wraps some of its own functions (an optimizer's add_param_group, state_dict, ...) with
`torch._disable_dynamo`, which imports torch._dynamo (and with it torch.distributed.fsdp, sympy, ...) on the first
call, only to tell the compiler not to trace them; and Optimizer.step calls `torch._dynamo.graph_break()`, a no-op
when nothing is compiled. A run that never compiles (model_param.compile false: the default) pays that import in every
process for nothing: more than importing torch itself on a small run.

`install()` puts a stand-in at torch._dynamo that answers those calls as the real module does when nothing is
compiled (disable: the function itself; graph_break, and trace_rules.clear_lru_cache that init_process_group calls:
nothing; utils.get_optimize_ddp_mode that DistributedDataParallel asks: the default, "ddp_optimizer") and becomes
the real module, imported then, on any other use (torch.compile in a user's hook, reading or setting the compiler's
config): it stands in only until something needs more. Spawned ranks of a run that does not compile are forked
from a server that did not import it either (spawn.py leaves it out of the fork server's preload), and stand in
as a single process does. A function disabled while it stood in stays plain (never marked
not-to-compile): compiling a region that calls such a function (an optimizer's own methods) may then trace it. A run
that compiles says so in its opts, and then nothing stands in. Only in a process that is playground's own
(`permit()`: the command's entry points, a Determined trial process the runner started), never in yours.

Tested against this torch (setup.cfg pins it): tests/playground/launch/test_deferred_dynamo.py trains with and without
the stand-in to bitwise equal checkpoints, and checks that a run with no compile never imports the real module.
"""
from __future__ import annotations

import importlib
import sys
import types

NAME = "torch._dynamo"
_permitted = False


class _Part:
    """A submodule of the stand-in: answers `calls` as the real one does while nothing compiles; anything else is
    the real submodule's (imported then)."""

    def __init__(self, name: str, **calls) -> None:
        self._name = name
        self.__dict__.update(calls)

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return getattr(getattr(_real(), self._name), name)


class _StandIn(types.ModuleType):
    """torch._dynamo until something needs the real one."""

    def disable(self, fn=None, recursive=True, **_kwargs):
        return (lambda f: f) if fn is None else fn

    def graph_break(self, *_args, **_kwargs) -> None:
        return None

    # init_process_group clears the compiler's trace-rule caches when torch._dynamo is imported: there are none yet
    trace_rules = _Part("trace_rules", clear_lru_cache=lambda: None)
    # DistributedDataParallel asks which way the compiler would split it: its default, as nothing has set another
    utils = _Part("utils", get_optimize_ddp_mode=lambda: "ddp_optimizer")

    def __getattr__(self, name: str):
        # A module's dunders are asked for by whoever walks sys.modules (inspect.getmodule, hasattr(m, "__file__")),
        # in the middle of other imports: the stand-in has none. Only __path__ means a submodule is being imported.
        if name.startswith("__") and name.endswith("__") and name != "__path__":
            raise AttributeError(name)
        return getattr(_real(), name)


def permit() -> None:
    """This process is playground's own (a command's entry point, a trial process the runner started): install()
    may stand in. In a process of yours that calls playground (a notebook, the API) it never does."""
    global _permitted
    _permitted = True


def permitted() -> bool:
    """Whether this process is playground's own (permit())."""
    return _permitted


def install() -> bool:
    """Stand in for torch._dynamo where permitted, unless it is imported already; whether it now stands in."""
    if NAME in sys.modules:
        return isinstance(sys.modules[NAME], _StandIn)
    if not _permitted:
        return False
    import torch
    stand_in = _StandIn(NAME, __doc__)
    sys.modules[NAME] = stand_in
    torch._dynamo = stand_in
    return True


def standing_in() -> bool:
    return isinstance(sys.modules.get(NAME), _StandIn)


def _real() -> types.ModuleType:
    """The real torch._dynamo, imported now in the stand-in's place."""
    if standing_in():
        import torch
        del sys.modules[NAME]
        del torch._dynamo
    return importlib.import_module(NAME)
