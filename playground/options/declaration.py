"""One declared opts key: its dotted path, type, default, whether it is mandatory, and who reads it.

The framework declares its keys in `builtin.py`; a component declares the keys it reads in the CANDLE
style, as a module-level list `additional_definitions` of dicts (name, type, default, required, choices, help)
plus an optional list `required` of names. `from_definition` turns one such dict into an `Opt`.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from playground.options.value_types import Choice, Nullable, OptType, from_python_type


class Need(enum.Enum):
    """How mandatory a key is, in the original Playground's words."""

    OPTIONAL = "optional"
    NON_EMPTY = "mandatory"            # must be present and not null/""
    NULLABLE = "mandatory, nullable"   # must be present, may be null or ""


class _NoDefault:
    def __repr__(self) -> str:
        return "(none)"


NO_DEFAULT: Any = _NoDefault()


@dataclass(frozen=True)
class Opt:
    path: str
    type: OptType
    default: Any = NO_DEFAULT
    need: Need = Need.OPTIONAL
    help: str = ""
    readers: tuple[str, ...] = field(default=("framework",))
    # Accepted for compatibility with original opts blobs but with no effect; the first use logs one info line.
    inert: bool = False

    @property
    def section(self) -> str:
        return self.path.split(".", 1)[0]


def from_definition(definition: dict, component: str, required: bool = False) -> Opt:
    """Build an `Opt` from a CANDLE-style definition dict declared by `component`.

    `name` must be a dotted path such as "model_param.num_layer" so the key has one place in the opts.
    """
    unknown = set(definition) - {"name", "type", "default", "required", "choices", "help", "nullable"}
    if unknown:
        raise ValueError(f"component {component}: definition {definition.get('name')!r} has unknown fields "
                         f"{sorted(unknown)}; allowed: name, type, default, required, choices, help, nullable")
    name = definition.get("name")
    if not isinstance(name, str) or name.count(".") < 1:
        raise ValueError(f"component {component}: definition name {name!r} must be a dotted opts path such as "
                         "'model_param.num_layer'")
    opt_type = from_python_type(definition.get("type", str))
    if "choices" in definition:
        opt_type = Choice(definition["choices"])
    if definition.get("nullable"):
        opt_type = Nullable(opt_type)
    need = Need.NON_EMPTY if (required or definition.get("required")) else Need.OPTIONAL
    return Opt(path=name, type=opt_type, default=definition.get("default", NO_DEFAULT), need=need,
               help=definition.get("help", ""), readers=(component,))
