"""Finds components: a public name from a module map, or any importable (dotted) module path.

Names come from, lowest precedence first: the project's module_map.py, installed packages that declare
components in the `playground.components` entry-point group (`name = "package.module"`), and the user's own
module map (a file with a MODULE_MAP dict, named by `--module-map FILE` or the PLAYGROUND_MODULE_MAP variable,
or a module_map.py beside the opts file), whose folder is importable. The variable carries the choice to
spawned ranks. Nobody edits the framework to add a component.

A component is a plain module. Its kind is recognised by the functions it defines (KINDS), for a meter by
a class named like the last part of its name, for a hook (`model.hooks_py`) by a subclass of
playground.trainer.Hook defined in the module itself, and for a trial (`model.trial_py`) by a class with the trial
methods (playground/trainer/trial.py), named by the last part of a `module.ClassName` path or the first in the module.
Lookups that fail list the closest registered names. Modules
are imported on first use only, so listing names or printing --help stays cheap.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import json
import os
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from playground.options.did_you_mean import closest
from playground.options.user_input.user_files import read_text
from playground.processes.exit_codes import UserError


class ComponentError(UserError, LookupError):
    """A component name could not be resolved or does not provide what its opts key needs."""


@dataclass(frozen=True)
class Kind:
    name: str
    functions: tuple[str, ...]      # a module of this kind defines at least one of these
    title: str


KINDS: dict[str, Kind] = {k.name: k for k in (
    Kind("input", ("get_input_dataset", "gen_input_builder_fun", "get_model_input_fun"), "input"),
    Kind("model", ("init_model", "run_training_net", "fun_per_iter_b4RunNet", "fun_per_epoch_b4RunNet"), "model"),
    Kind("forward_pass", ("gen_forward_pass_builder_fun",), "forward pass"),
    Kind("param_update", ("gen_param_update_builder_fun",), "parameter update"),
    Kind("optimizer", ("gen_optimizer_fun",), "optimizer"),
    Kind("rendezvous", ("gen_rendezvous_ctx",), "rendezvous"),
    Kind("output", ("fun_conclude_operator", "assembleAllOutputs"), "output"),
    Kind("checkpoint_path", ("gen_checkpoint_path",), "checkpoint path"),
    Kind("meter", (), "meter"),
    Kind("hook", (), "hook"),
    Kind("trial", (), "trial"),
    Kind("override", (), "override"),
)}


@dataclass(frozen=True)
class Component:
    name: str          # as written in the opts
    module_path: str   # dotted module path it resolved to
    module: ModuleType

    @property
    def file(self) -> str:
        return getattr(self.module, "__file__", None) or "<no file>"

    @property
    def description(self) -> str:
        doc = inspect.getdoc(self.module) or ""
        return doc.strip().splitlines()[0] if doc.strip() else ""

    def kinds(self) -> list[str]:
        found = [k.name for k in KINDS.values() if any(callable(getattr(self.module, f, None)) for f in k.functions)]
        if self.meter_class() is not None:
            found.append("meter")
        if self.hook_class() is not None:
            found.append("hook")
        if self.trial_class() is not None:
            found.append("trial")
        return found or ["override"]

    def meter_class(self) -> type | None:
        candidate = getattr(self.module, self.name.rsplit(".", 1)[-1], None)
        if inspect.isclass(candidate) and all(callable(getattr(candidate, m, None)) for m in ("Reset", "Add", "Compute")):
            return candidate
        return None

    def hook_class(self) -> type | None:
        """The Hook subclass this module defines (the first, in definition order), if any."""
        for candidate in list(vars(self.module).values()):
            if (inspect.isclass(candidate) and getattr(candidate, "is_playground_hook", False) is True
                    and candidate.__module__ == self.module.__name__):
                return candidate
        return None

    def trial_class(self) -> type | None:
        """The trial class: the one a `module.ClassName` name points at, else the first trial class defined in
        the module (a class with build_model, build_training_data_loader and build_validation_data_loader)."""
        named = getattr(self.module, self.name.rsplit(".", 1)[-1], None)
        if _is_trial_class(named):
            return named
        for candidate in list(vars(self.module).values()):
            if _is_trial_class(candidate) and candidate.__module__ == self.module.__name__:
                return candidate
        return None

    def functions(self) -> dict[str, Any]:
        """Functions defined in the component's own module (imported helpers are not part of it)."""
        return {name: fn for name, fn in inspect.getmembers(self.module, inspect.isfunction)
                if fn.__module__ == self.module.__name__ and not name.startswith("_")}

    def __reduce__(self) -> tuple:
        # A spawned rank receives the resolved opts pickled: the module travels as its name and is imported
        # there (the rank has the parent's sys.path and environment, so it finds the same module).
        return _imported_component, (self.name, self.module_path, self.module.__name__)


def _imported_component(name: str, module_path: str, module_name: str) -> Component:
    return Component(name=name, module_path=module_path, module=importlib.import_module(module_name))


ENV_MODULE_MAP = "PLAYGROUND_MODULE_MAP"
ENTRY_POINT_GROUP = "playground.components"


def use_module_map(path: str) -> None:
    """Make the user's module map at `path` part of every lookup, here and in the processes started from here."""
    if not os.path.isfile(path):
        raise ComponentError(f"--module-map {path}: no such file")
    _user_module_map(os.path.abspath(path))   # an unusable map is one error now, not one per component named
    os.environ[ENV_MODULE_MAP] = os.path.abspath(path)


def chosen_module_map() -> str | None:
    """The user's module map in use in this process (absolute path), if any."""
    return os.environ.get(ENV_MODULE_MAP) or None


def use_recorded_module_map(opts_file: str) -> None:
    """When no module map was chosen: the one a run recorded in its opts.json (`"module_map"` beside `"opts"`),
    so commands that read a run folder (eval, predict, a re-run from its opts.json) find its components."""
    if chosen_module_map():
        return
    try:
        with open(opts_file, encoding="utf-8") as handle:
            recorded = json.load(handle).get("module_map")
    except (OSError, ValueError, AttributeError):
        return
    if not recorded:
        return
    if not os.path.isfile(recorded):
        raise ComponentError(f"{opts_file}: the run used the module map {recorded}, which is gone; give "
                             "--module-map FILE (a map with the run's component names)")
    use_module_map(recorded)


TRIAL_METHODS = ("build_model", "build_training_data_loader", "build_validation_data_loader")


def _is_trial_class(candidate: Any) -> bool:
    """A class with the trial methods (playground/trainer/trial.py), other than the optional base class itself."""
    return (inspect.isclass(candidate) and candidate.__module__ != "playground.trainer.trial"
            and all(callable(getattr(candidate, name, None)) for name in TRIAL_METHODS))


def module_map() -> dict[str, str]:
    """The registered table: public name -> dotted module path."""
    merged = dict(_project_module_map())
    merged.update(installed_components())
    user = os.environ.get(ENV_MODULE_MAP)
    if user:
        merged.update(_user_module_map(user))
    return merged


_PROJECT_MAP: dict[str, str] | None = None


def _project_module_map() -> dict[str, str]:
    """The project's own table, module_map.py beside the playground package (in a checkout and in an install),
    loaded by its path: `import module_map` would find a user's module_map.py first wherever their folder comes
    earlier on sys.path (the current directory, the folder of their map in a spawned rank) and lose every name
    the project registers."""
    global _PROJECT_MAP
    if _PROJECT_MAP is None:
        import importlib.util
        path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.pardir, "module_map.py")
        spec = importlib.util.spec_from_file_location("_playground_project_module_map", os.path.normpath(path))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # type: ignore[union-attr]
        _PROJECT_MAP = dict(module.MODULE_MAP)
    return _PROJECT_MAP


def installed_components() -> dict[str, str]:
    """Components that installed packages declare in the `playground.components` entry-point group."""
    return dict(_installed_components())


@functools.lru_cache(maxsize=1)
def _installed_components() -> dict[str, str]:
    # Read once a process: a run resolves a dozen names, and each reading walks every installed distribution's
    # metadata (10 ms here, a third of what a forked sweep trial spends before its first step).
    from importlib.metadata import entry_points
    # "package.module:Class" names a meter class inside a module, which `resolve` writes with a dot
    return {ep.name: ep.value.replace(":", ".") for ep in entry_points(group=ENTRY_POINT_GROUP)}


_USER_MAPS: dict[tuple, dict[str, str]] = {}    # (path, mtime, size) -> its table: a map is run once per version


def _user_module_map(path: str) -> dict[str, str]:
    folder = os.path.dirname(os.path.abspath(path))
    if folder not in sys.path:
        sys.path.insert(0, folder)   # the user's components usually sit beside their map
    try:
        stat = os.stat(path)
    except OSError as err:
        raise ComponentError(f"module map {path}: cannot read it: {err.strerror}") from None
    key = (path, stat.st_mtime_ns, stat.st_size)
    if key not in _USER_MAPS:
        _USER_MAPS[key] = _load_user_module_map(path)
    return dict(_USER_MAPS[key])


def _load_user_module_map(path: str) -> dict[str, str]:
    import importlib.util
    source = read_text(path, "the module map", f"module map {path}", ComponentError)
    spec = importlib.util.spec_from_file_location("_playground_user_module_map", path)
    try:
        module = importlib.util.module_from_spec(spec)
        exec(compile(source, path, "exec"), vars(module))  # noqa: S102 - the user's own map, as importing it would
    except Exception as err:  # noqa: BLE001 - a user's file: any error is theirs to read
        raise ComponentError(f"module map {path}: cannot load it: {type(err).__name__}: {err}") from None
    table = getattr(module, "MODULE_MAP", None)
    if not isinstance(table, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in table.items()):
        raise ComponentError(f"module map {path}: expected MODULE_MAP = {{'name': 'dotted.module.path', ...}}")
    return dict(table)


def resolve(name: str, kind: str | None = None, where: str = "") -> Component:
    """Resolve a component name (registered, or a dotted module path) and check it is of `kind`.

    `where` is the dotted opts path that named it, for the error message.
    """
    where_text = f"{where}: " if where else ""
    table = module_map()
    module_path = table.get(name, name)
    module = _import(module_path, name, where_text, table, kind)
    component = Component(name=name, module_path=module_path, module=module)
    if kind is not None and kind != "override" and kind not in component.kinds():
        wanted = KINDS[kind]
        provides = (" or ".join(wanted.functions) if wanted.functions
                    else "a subclass of playground.trainer.Hook" if kind == "hook"
                    else "a class with build_model, build_training_data_loader and build_validation_data_loader"
                    if kind == "trial"
                    else f"a class named {name.rsplit('.', 1)[-1]} with Reset, Add and Compute")
        kinds = " and ".join(KINDS[k].title for k in component.kinds())
        raise ComponentError(f"{where_text}{name!r} ({component.file}) is {_a(kinds)} {kinds} component, "
                             f"not {_a(wanted.title)} {wanted.title} component: it does not define {provides}.")
    return component


def _import(module_path: str, name: str, where_text: str, table: dict[str, str], kind: str | None) -> ModuleType:
    # Dotted paths are resolved like `python -m`: the working directory is importable.
    if os.getcwd() not in sys.path:
        sys.path.append(os.getcwd())
    try:
        return importlib.import_module(module_path)
    except ModuleNotFoundError as err:
        parent, _, attribute = module_path.rpartition(".")
        if err.name == module_path and parent and kind in (None, "meter", "trial"):
            # "package.module.ClassName": a meter or trial class inside a module
            try:
                module = importlib.import_module(parent)
            except ImportError:
                module = None
            if module is not None and inspect.isclass(getattr(module, attribute, None)):
                return module
        if err.name and module_path.startswith(err.name) and name not in table:
            detail = "" if err.name == name else f" (no module {err.name!r} can be imported)"
            raise ComponentError(f"{where_text}unknown component {name!r}{detail}. {_suggest(name, table, kind)}") from None
        raise ComponentError(f"{where_text}component {name!r} (module {module_path}) failed to import: {err}") from err
    except Exception as err:  # a user's module with a syntax or import-time error
        raise ComponentError(f"{where_text}component {name!r} (module {module_path}) failed to import: "
                             f"{type(err).__name__}: {err}") from err


def _a(noun: str) -> str:
    return "an" if noun[:1] in "aeiou" else "a"


def _suggest(name: str, table: dict[str, str], kind: str | None) -> str:
    close = closest(name, table, n=3)
    if close:
        return "Closest registered names: " + ", ".join(close) + "."
    return ("Run `playground components` for the registered names, or give an importable dotted module path "
            "such as mypackage.my_component.")
