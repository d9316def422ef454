"""What the pages need of a sweep's spec (sweep.json): its name, objectives, searcher with its defaults filled
in, and space, parsed by the sweep layer's own parser. A spec that no longer parses here (its base opts file
moved, say) still shows: its name, objectives and space as written, and the reason beside them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from playground.sweeps.errors import SweepError
from playground.sweeps.inputs.space import Param, parse_space
from playground.sweeps.inputs.spec import parse_spec


@dataclass
class SpecView:
    name: str
    objectives: list[tuple[str, str]]           # (metric, mode) in the spec's order
    searcher: dict[str, Any]
    space: list[Param] = field(default_factory=list)
    note: str = ""                               # why the spec is shown as written

    @property
    def sampled(self) -> list[Param]:
        return [p for p in self.space if p.sampled]

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "objectives": [{"metric": m, "mode": mode} for m, mode in self.objectives],
                "searcher": self.searcher, "note": self.note,
                "space": [{"key": p.key, "type": p.type, "log": p.type == "log"} for p in self.sampled],
                "constants": {p.key: p.val for p in self.space if not p.sampled}}


def spec_view(stored: Any, fallback_name: str) -> SpecView:
    """The view of sweep.json's content (`stored`, None when unreadable)."""
    raw = stored.get("spec") if isinstance(stored, dict) else None
    if not isinstance(raw, dict):
        return SpecView(fallback_name, [], {}, note="sweep.json is missing or unreadable")
    try:
        spec = parse_spec(raw, root="/", origin="sweep.json")
        return SpecView(spec.name, [(o.metric, o.mode) for o in spec.objectives], spec.searcher, spec.space)
    except SweepError as err:
        note = "; ".join(err.problems)
    objective = raw.get("objective")
    items = objective if isinstance(objective, list) else [objective] if isinstance(objective, dict) else []
    objectives = [(str(o["metric"]), o.get("mode", "min")) for o in items if isinstance(o, dict) and "metric" in o]
    try:
        space = parse_space(raw.get("space") or {})
    except SweepError:
        space = []
    searcher = raw.get("searcher") if isinstance(raw.get("searcher"), dict) else {}
    return SpecView(str(raw.get("name") or fallback_name), objectives, searcher, space,
                    note=f"shown as written ({note})")
