"""The module paths users were told to import before the package had subpackages, and the finder that keeps
them working: `import playground.meters` gives the module object of playground.trainer.meters (the same one)
and a DeprecationWarning naming the new path; `python -m playground.demo` runs playground.commands.demo.

Only paths the documentation showed are kept (README.md, docs/, experiments/, in any earlier version of them):
docs/components.md wrote `from playground.meters import Meter`, `playground.model.Model`, `playground.opt_types`,
`playground.lr_schedule`, `playground.run_context.RunContext` and `playground.rendezvous.fresh_attempt_store`;
docs/candle.md and experiments/candle_digits imported `playground.batch_stream`; docs/resnet.md ran
`python -m playground.demo`. Other modules moved too, but no user was told their old path, so it is gone.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

PACKAGE = "playground"

# old path under playground. -> new path under playground.
MOVED = {
    "opt_types": "options.value_types",
    "model": "trainer.model",
    "meters": "trainer.meters",
    "lr_schedule": "trainer.lr_schedule",
    "run_context": "distribution.run_context",
    "rendezvous": "distribution.rendezvous",
    "batch_stream": "data.batch_stream",
    "demo": "commands.demo",
}


def moved_line(old: str, new: str, how: str = "import it from there") -> str:
    """The DeprecationWarning's message for a use of the old path."""
    return f"{old} moved to {new}; {how} (the old path will be removed)"


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path of MOVED; its module is the moved module itself, and importing it warns, attributed to
    the line that imported the old path."""

    def find_spec(self, name: str, path, target=None):
        prefix, _, old = name.partition(".")
        if prefix != PACKAGE or old not in MOVED:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        new = _new_name(spec.name)
        warnings.warn(moved_line(spec.name, new), DeprecationWarning,
                      stacklevel=2)   # past create_module; warn skips importlib's frames
        module = importlib.import_module(new)
        spec.loader_state = module.__spec__   # importlib replaces the module's spec with this one; put it back
        return module

    def exec_module(self, module) -> None:
        module.__spec__ = module.__spec__.loader_state

    def get_code(self, fullname: str):
        """`python -m OLD` (runpy asks for the code to run as __main__): warn there, then run the new module."""
        new = _new_name(fullname)
        how = f"run `python -m {new}`"
        return compile(f"import runpy, warnings\n"
                       f"warnings.warn({moved_line(fullname, new, how)!r}, DeprecationWarning)\n"
                       f"runpy.run_module({new!r}, run_name='__main__', alter_sys=True)\n", fullname, "exec")


def _new_name(old: str) -> str:
    return f"{PACKAGE}.{MOVED[old.partition('.')[2]]}"


def install() -> None:
    """Put the finder last on sys.meta_path (once): the package's real modules are always found first."""
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(MovedModules())
