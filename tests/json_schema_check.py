"""A minimal JSON Schema checker for the keywords `playground schema` emits (type, properties, required,
enum, minimum/maximum, items, minItems, anyOf, additionalProperties). Test helper only; it returns a list of
problems so a test can show them all.
"""
from __future__ import annotations

from typing import Any

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def check(value: Any, schema: dict, path: str = "$") -> list[str]:
    problems: list[str] = []
    if "anyOf" in schema:
        if all(check(value, option, path) for option in schema["anyOf"]):
            problems.append(f"{path}: matches none of the allowed forms")
        if set(schema) <= {"anyOf", "description", "default"}:
            return problems
        # beside other keywords (opts: a trial class, or the components it replaces), every keyword applies
    kind = schema.get("type")
    if kind == "integer":
        if not (isinstance(value, int) and not isinstance(value, bool)):
            return [f"{path}: expected an integer"]
    elif kind == "number":
        if not (isinstance(value, (int, float)) and not isinstance(value, bool)):
            return [f"{path}: expected a number"]
    elif kind is not None and not isinstance(value, _TYPES[kind]):
        return [f"{path}: expected {kind}"]
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{path}: {value!r} not in {schema['enum']}")
    for key, test in (("minimum", lambda v, m: v >= m), ("maximum", lambda v, m: v <= m),
                      ("exclusiveMinimum", lambda v, m: v > m), ("exclusiveMaximum", lambda v, m: v < m)):
        if key in schema and not test(value, schema[key]):
            problems.append(f"{path}: {value} violates {key} {schema[key]}")
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                problems.append(f"{path}: missing {name}")
        properties = schema.get("properties", {})
        for name, child in value.items():
            if name in properties:
                problems.extend(check(child, properties[name], f"{path}.{name}"))
            elif schema.get("additionalProperties") is False:
                problems.append(f"{path}: unexpected {name}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            problems.append(f"{path}: fewer than {schema['minItems']} items")
        if "items" in schema:
            for index, item in enumerate(value):
                problems.extend(check(item, schema["items"], f"{path}[{index}]"))
    return problems
