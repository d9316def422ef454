"""`determined` and `determined.X...` as other names of playground.compat.determined and its submodules, one
module object per name: installed by on_path/determined.py in the processes playground starts for a
Determined experiment (and in nothing else).

Putting a package first on the path is not enough: Python would then load `determined.core` from the files of
playground.compat.determined.core a second time, as a second module whose classes are not the first one's. A
finder first on sys.meta_path answers every `determined.X` with the module `playground.compat.determined.X`
itself (imported under its own name once), so `import determined.core`, `from determined import core` and
`playground.compat.determined.core` are one object, and a subclass of `determined.pytorch.PyTorchTrial` is a
subclass of playground's. The real package, when installed, is never imported in such a process.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from types import ModuleType

ALIAS = "determined"
IMPLEMENTATION = "playground.compat.determined"


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, module: ModuleType) -> None:
        self.module, self.own_spec = module, module.__spec__

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return self.module

    def exec_module(self, module: ModuleType) -> None:
        # The import system set the alias's spec on the module: give it back its own (it is the same module).
        module.__spec__ = self.own_spec

    def get_code(self, fullname: str):
        """The implementation's code: `python -m determined.launch.wrap_rank` runs it as __main__ (runpy)."""
        return self.own_spec.loader.get_code(self.own_spec.name)


class AliasFinder(importlib.abc.MetaPathFinder):
    """`determined.X` -> the module `playground.compat.determined.X`."""

    def find_spec(self, fullname: str, path=None, target=None):
        if not fullname.startswith(ALIAS + "."):
            return None
        implementation = IMPLEMENTATION + fullname[len(ALIAS):]
        try:
            found = importlib.util.find_spec(implementation)
        except ModuleNotFoundError:
            found = None
        if found is None:
            raise ModuleNotFoundError(f"No module named {fullname!r}: playground's implementation of determined "
                                      f"(docs/determined.md) has no {fullname}", name=fullname)
        # origin: where the code is (runpy gives it as sys.argv[0] to `python -m determined.launch.X`)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(importlib.import_module(implementation)),
                                              origin=found.origin,
                                              is_package=found.submodule_search_locations is not None)


def install() -> ModuleType:
    """The finder first on sys.meta_path (once), `determined` as playground.compat.determined; that module."""
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())
    implementation = importlib.import_module(IMPLEMENTATION)
    sys.modules[ALIAS] = implementation
    return implementation
