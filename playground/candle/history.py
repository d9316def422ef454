"""What a CANDLE script's `run(params)` returned, as per-epoch metric lists.

Accepted: None (nothing to report), a dict of lists (one value per epoch), a Keras-like object with a
`.history` dict, or CANDLE's PyTorch pair `(val_scores, infer_scores)` of dicts (final values or lists;
infer keys get an `infer_` prefix unless they have one). Scalars count as a one-epoch list.
"""
from __future__ import annotations

from typing import Any

from playground.processes.exit_codes import UserError


class HistoryError(UserError, TypeError):
    """run(params) returned something that is not a history; the message says what was accepted."""


def history_lists(returned: Any) -> dict[str, list[float | None]]:
    """Metric name -> values, one per epoch (the lists may differ in length)."""
    if returned is None:
        return {}
    if hasattr(returned, "history") and isinstance(returned.history, dict):
        returned = returned.history
    if isinstance(returned, (tuple, list)) and len(returned) == 2 and all(isinstance(r, dict) or r is None
                                                                          for r in returned):
        val, infer = returned
        merged = dict(val or {})
        merged.update({(k if k.startswith("infer") else f"infer_{k}"): v for k, v in (infer or {}).items()})
        returned = merged
    if not isinstance(returned, dict):
        raise HistoryError(f"run(params) returned {type(returned).__name__}; expected None, a dict of metric lists, "
                           "an object with a .history dict (Keras), or (val_scores, infer_scores)")
    return {str(name): [_number(v) for v in (values if isinstance(values, (list, tuple)) else [values])]
            for name, values in returned.items() if _is_metric(values)}


def _is_metric(values: Any) -> bool:
    items = values if isinstance(values, (list, tuple)) else [values]
    return all(_number(v) is not None or v is None for v in items)


def _number(value: Any) -> float | None:
    if hasattr(value, "item"):   # numpy and torch scalars
        try:
            value = value.item()
        except (ValueError, RuntimeError):
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)
