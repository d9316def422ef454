"""The opts keys components declare: one component's (`declarations_of`) and every registered component's
(`component_declarations`, which imports them all: for error messages and the generated reference only).

Below both the loader and the unknown-key checks, so neither has to import the other's users.
"""
from __future__ import annotations

import sys

from playground.options.declaration import Need, Opt, from_definition
from playground.options.registry import Component, ComponentError, module_map, resolve
from playground.options.value_types import Anything


def declarations_of(component: Component) -> list[Opt]:
    """The opts keys a component declares (CANDLE style: `additional_definitions` and `required`); for a trial
    class, those of the modules of the classes it derives from too (a subclass keeps its base's keys)."""
    modules = [component.module]
    trial = component.trial_class()
    if trial is not None:
        modules += [sys.modules[c.__module__] for c in trial.__mro__[1:] if c.__module__ in sys.modules]
    definitions: list[dict] = []
    required: set[str] = set()
    for module in dict.fromkeys(modules):
        definitions += [d for d in getattr(module, "additional_definitions", None) or []
                        if d.get("name") not in {e.get("name") for e in definitions}]
        required |= set(getattr(module, "required", None) or [])
    opts = [from_definition(d, component.name, d.get("name") in required) for d in definitions]
    declared = {o.path for o in opts}
    for path in sorted(required - declared):
        opts.append(Opt(path=path, type=Anything(), need=Need.NON_EMPTY, readers=(component.name,)))
    return opts


def component_declarations() -> list[Opt]:
    """Every declaration made by a registered component, in module_map order; an unimportable component is
    reported on stderr and skipped."""
    out: list[Opt] = []
    for name in module_map():
        try:
            out.extend(declarations_of(resolve(name)))
        except ComponentError as err:
            print(f"playground: warning: skipping component {name!r}: {err}", file=sys.stderr)
    return out
