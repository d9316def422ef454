"""CANDLE's upf file: one JSON object per line, `id` required and unique, the other keys opts keys.

A key is dotted (`epoch_iter.num_epochs`) or a bare CANDLE name that names exactly one known key (`epochs`,
`batch_size`, `learning_rate`, or a key's own last part). Blank lines and `#` comments are skipped. The whole
file is checked before anything runs.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from playground.options.user_input.user_files import read_text
from playground.sweeps.errors import SweepError

# CANDLE's benchmark names for the keys every run has.
CANDLE_NAMES = {"epochs": "epoch_iter.num_epochs", "batch_size": "epoch_iter.batch_per_device",
                "learning_rate": "model_param.base_learning_rate", "rng_seed": "model_param.seed"}
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class UpfLine:
    id: str
    params: dict[str, Any]     # as written; keys resolved later against the opts schema
    line: int


def read_upf(path: str) -> list[UpfLine]:
    lines = read_text(path, "the upf file", path, SweepError).splitlines()
    out, problems, seen = [], [], {}
    for number, text in enumerate(lines, 1):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        where = f"{path}, line {number}"
        try:
            item = json.loads(text)
        except json.JSONDecodeError as err:
            problems.append(f"{where}: not a JSON object: {err.msg} at column {err.colno}")
            continue
        if not isinstance(item, dict):
            problems.append(f"{where}: expected a JSON object such as {{\"id\": \"RUN000\", \"epochs\": 1}}")
            continue
        trial_id = item.pop("id", None)
        if not isinstance(trial_id, str) or not _SAFE_ID.match(trial_id):
            problems.append(f"{where}: `id` is required: a name of letters, digits, '.', '_' or '-' (it names the "
                            "trial's folder)")
            continue
        if trial_id in seen:
            problems.append(f"{where}: duplicate id {trial_id!r} (first on line {seen[trial_id]})")
            continue
        seen[trial_id] = number
        out.append(UpfLine(trial_id, item, number))
    if not out and not problems:
        problems.append(f"{path}: no parameter lines")
    if not out and len(problems) > 1 and all(": not a JSON object:" in p for p in problems):
        problems = [f"{path}: not a upf file: no line is a JSON object (first: {problems[0].split(', ', 1)[1]})"]
    if problems:
        raise SweepError(problems)
    return out


def resolve_name(key: str, known: list[str]) -> tuple[str | None, list[str]]:
    """A dotted key stays; a bare name maps to the one key it names. Returns (key or None, candidates)."""
    if "." in key:
        return key, []
    if key in CANDLE_NAMES:
        return CANDLE_NAMES[key], []
    matches = [p for p in known if p.rsplit(".", 1)[-1] == key]
    if len(matches) == 1:
        return matches[0], []
    if not matches:
        matches = [p for p in known if p.rsplit(".", 1)[-1].endswith("_" + key) or key in p.rsplit(".", 1)[-1]]
    return None, matches
