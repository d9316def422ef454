"""Value types for opts keys: each checks a JSON value, normalises it, and describes itself.

A type's `check` returns the normalised value or raises `OptTypeError` whose text completes the sentence
"expected ..." (the caller adds the dotted path and the offending value). `schema()` gives the JSON Schema
fragment used by `playground schema`. Types are plain objects so component declarations can reuse them.
"""
from __future__ import annotations

from typing import Any, Iterable


class OptTypeError(ValueError):
    """A value does not match its declared type; `expected` says what was wanted."""

    def __init__(self, expected: str, subpath: str = "") -> None:
        super().__init__(expected)
        self.expected = expected
        self.subpath = subpath


class OptType:
    description = "any value"

    def check(self, value: Any) -> Any:
        return value

    def schema(self) -> dict:
        return {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.description})"


class Anything(OptType):
    pass


class Int(OptType):
    def __init__(self, minimum: int | None = None) -> None:
        self.minimum = minimum
        self.description = {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}.get(
            minimum, f"an integer >= {minimum}")

    def check(self, value: Any) -> int:
        if isinstance(value, bool):
            raise OptTypeError(self.description)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, int) or (self.minimum is not None and value < self.minimum):
            raise OptTypeError(self.description)
        return value

    def schema(self) -> dict:
        out: dict = {"type": "integer"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        return out


class Float(OptType):
    def __init__(self, minimum: float | None = None, maximum: float | None = None,
                 exclusive_minimum: bool = False, exclusive_maximum: bool = False) -> None:
        self.minimum, self.maximum = minimum, maximum
        self.exclusive_minimum, self.exclusive_maximum = exclusive_minimum, exclusive_maximum
        parts = []
        if minimum is not None:
            parts.append(f"{'>' if exclusive_minimum else '>='} {minimum:g}")
        if maximum is not None:
            parts.append(f"{'<' if exclusive_maximum else '<='} {maximum:g}")
        self.description = "a number" + (" " + " and ".join(parts) if parts else "")

    def check(self, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise OptTypeError(self.description)
        value = float(value)
        lo, hi = self.minimum, self.maximum
        if lo is not None and (value < lo or (self.exclusive_minimum and value == lo)):
            raise OptTypeError(self.description)
        if hi is not None and (value > hi or (self.exclusive_maximum and value == hi)):
            raise OptTypeError(self.description)
        return value

    def schema(self) -> dict:
        out: dict = {"type": "number"}
        if self.minimum is not None:
            out["exclusiveMinimum" if self.exclusive_minimum else "minimum"] = self.minimum
        if self.maximum is not None:
            out["exclusiveMaximum" if self.exclusive_maximum else "maximum"] = self.maximum
        return out


class Bool(OptType):
    description = "true or false"

    def check(self, value: Any) -> bool:
        if not isinstance(value, bool):
            raise OptTypeError(self.description)
        return value

    def schema(self) -> dict:
        return {"type": "boolean"}


class Str(OptType):
    description = "a string"

    def check(self, value: Any) -> str:
        if not isinstance(value, str):
            raise OptTypeError(self.description)
        return value

    def schema(self) -> dict:
        return {"type": "string"}


class ComponentName(Str):
    """A registered component name or an importable dotted module path; resolved by the registry."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.description = f"the name of a registered {kind.replace('_', ' ')} component (a string)"

    def schema(self) -> dict:
        return {"type": "string", "x-playground-component-kind": self.kind}


class Choice(OptType):
    def __init__(self, values: Iterable[Any]) -> None:
        self.values = tuple(values)
        self.description = "one of " + ", ".join(repr(v) if isinstance(v, str) else str(v) for v in self.values)

    def check(self, value: Any) -> Any:
        for allowed in self.values:
            if type(value) is type(allowed) and value == allowed:
                return value
        raise OptTypeError(self.description)

    def schema(self) -> dict:
        return {"enum": list(self.values)}


class Nullable(OptType):
    """The inner type or null; "" is accepted as null for string-like values, as the original blobs use it."""

    def __init__(self, inner: OptType) -> None:
        self.inner = inner
        self.description = f"{inner.description}, or null"

    def check(self, value: Any) -> Any:
        if value is None:
            return None
        return self.inner.check(value)

    def schema(self) -> dict:
        return {"anyOf": [self.inner.schema(), {"type": "null"}]}


class AnyOf(OptType):
    def __init__(self, *options: OptType) -> None:
        self.options = options
        self.description = " or ".join(o.description for o in options)

    def check(self, value: Any) -> Any:
        for option in self.options:
            try:
                return option.check(value)
            except OptTypeError:
                continue
        raise OptTypeError(self.description)

    def schema(self) -> dict:
        return {"anyOf": [o.schema() for o in self.options]}


class ListOf(OptType):
    def __init__(self, item: OptType, min_items: int = 0, max_items: int | None = None) -> None:
        self.item, self.min_items, self.max_items = item, min_items, max_items
        if max_items is not None and max_items == min_items:
            size = f" of {min_items} items"
        elif max_items is not None:
            size = f" of {min_items} to {max_items} items"
        else:
            size = f" of at least {min_items} items" if min_items else ""
        self.description = f"a list{size}, each item {item.description}"

    def check(self, value: Any) -> list:
        if not isinstance(value, list) or len(value) < self.min_items or \
                (self.max_items is not None and len(value) > self.max_items):
            raise OptTypeError(self.description)
        out = []
        for index, element in enumerate(value):
            try:
                out.append(self.item.check(element))
            except OptTypeError as err:
                raise OptTypeError(err.expected, f"[{index}]{err.subpath}") from None
        return out

    def schema(self) -> dict:
        out: dict = {"type": "array", "items": self.item.schema()}
        if self.min_items:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        return out


class Mapping(OptType):
    description = "an object (JSON dictionary)"

    def check(self, value: Any) -> dict:
        if not isinstance(value, dict):
            raise OptTypeError(self.description)
        return value

    def schema(self) -> dict:
        return {"type": "object"}


class Record(OptType):
    """An object with named fields, each (type, required, default); other fields are errors."""

    def __init__(self, what: str, fields: dict[str, tuple[OptType, bool, Any]]) -> None:
        self.what, self.fields = what, fields
        self.description = f"{what} object with fields " + ", ".join(fields)

    def check(self, value: Any) -> dict:
        if not isinstance(value, dict):
            raise OptTypeError(f"{self.what} object (a JSON dictionary)")
        out = {}
        for name, (ftype, required, default) in self.fields.items():
            if name not in value:
                if required:
                    raise OptTypeError(f"the field {name!r} ({ftype.description}), which is missing", f".{name}")
                out[name] = default
                continue
            try:
                out[name] = ftype.check(value[name])
            except OptTypeError as err:
                raise OptTypeError(err.expected, f".{name}{err.subpath}") from None
        extra = sorted(set(value) - set(self.fields))
        if extra:
            raise OptTypeError(f"only the fields {', '.join(self.fields)}; {extra[0]!r} is not one of them",
                               f".{extra[0]}")
        return out

    def schema(self) -> dict:
        return {
            "type": "object",
            "properties": {name: ftype.schema() for name, (ftype, _, _) in self.fields.items()},
            "required": [name for name, (_, required, _) in self.fields.items() if required],
            "additionalProperties": False,
        }


_PYTHON_TYPES: dict[type, OptType] = {int: Int(), float: Float(), str: Str(), bool: Bool(), list: ListOf(Anything()),
                                      dict: Mapping()}


def from_python_type(declared: Any) -> OptType:
    """Accept CANDLE-style python types (int, float, str, bool, list, dict) as well as OptType objects."""
    if isinstance(declared, OptType):
        return declared
    if declared in _PYTHON_TYPES:
        return _PYTHON_TYPES[declared]
    raise TypeError(f"unsupported opts type {declared!r}; use int, float, str, bool, list, dict or a "
                    "playground.options.value_types type")

