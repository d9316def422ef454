"""Makes the trainer class of one run: AnyExp + the run's components + its override module.

Two fresh subclasses per run, never touching AnyExp itself: `AnyExpComponents` holds the component functions
(the kind's contract names only), and `AnyExpRun` on top of it holds the override module's functions. An
override can therefore call the component's version with `super(type(self), self).name(...)`. With a trial class
(`model.trial_py`), a layer between the two fills the component slots from the trial (trial_adapter.py).
"""
from __future__ import annotations

import inspect
import logging
from typing import Any

from playground.trainer.anyexp import AnyExp
from playground.options.builtin import BUILTIN_OPTS
from playground.options.did_you_mean import did_you_mean
from playground.options.loader import ResolvedOpts
from playground.options.registry import KINDS

# opts path of each *_py key -> the component kind it names
_KIND_OF_PATH = {o.path: o.type.kind for o in BUILTIN_OPTS if hasattr(o.type, "kind")}


def build_trainer_class(resolved: ResolvedOpts) -> type[AnyExp]:
    namespace: dict[str, Any] = {}
    for path, component in resolved.components.items():
        kind = _KIND_OF_PATH.get(path)
        if kind in (None, "override"):
            continue
        for name in KINDS[kind].functions:
            function = getattr(component.module, name, None)
            if callable(function):
                namespace[name] = staticmethod(function) if name == "get_input_dataset" else function
    base = type("AnyExpComponents", (AnyExp,), namespace)
    trial = resolved.components.get("model.trial_py")
    if trial is not None:
        base = _trial_layer(base, trial)
    override = resolved.components.get("model.additional_override_py")
    functions = override.functions() if override is not None else {}
    _warn_unknown(functions, override.name if override else "")
    return type("AnyExpRun", (base,), dict(functions))


def _trial_layer(base: type[AnyExp], trial: Any) -> type[AnyExp]:
    """A layer that fills the component slots from the trial class (trial_adapter.py), above the components so
    that the trial's build_optimizer can fall back to the opts' optimizer component."""
    from playground.trainer import trial_adapter

    namespace = {name: getattr(trial_adapter, name) for name in trial_adapter.TRIAL_SLOTS}
    layer = type("AnyExpTrial", (base,), {**namespace, "trial_class": trial.trial_class()})
    layer.trial_base = layer
    return layer


def _warn_unknown(functions: dict[str, Any], module: str) -> None:
    known = [name for name, _ in inspect.getmembers(AnyExp, inspect.isfunction)]
    for name in functions:
        if name not in known:
            hint = did_you_mean(name, known)
            hint = f"; {hint}" if hint else ""
            logging.getLogger("playground").warning(
                "override %s defines %s, which is not a trainer method (added as a new method)%s", module, name, hint)
