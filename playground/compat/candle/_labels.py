"""candle_lib's label encodings: `to_categorical`, `convert_to_class`, `discretize_array`,
`discretize_dataframe`, `lookup`."""
from __future__ import annotations

from typing import Any

import numpy as np


def to_categorical(y: Any, num_classes: int | None = None) -> np.ndarray:
    """Integer classes -> one-hot float32 rows (Keras' function, which candle_lib carries): the classes axis is
    last; a trailing axis of length 1 is replaced by it; `num_classes` defaults to the largest class + 1."""
    y = np.array(y, dtype="int")
    shape = y.shape
    if shape and shape[-1] == 1 and len(shape) > 1:
        shape = tuple(shape[:-1])
    y = y.ravel()
    num_classes = num_classes or int(np.max(y)) + 1
    one_hot = np.zeros((y.shape[0], num_classes), dtype=np.float32)
    one_hot[np.arange(y.shape[0]), y] = 1
    return one_hot.reshape(shape + (num_classes,))


def convert_to_class(y_one_hot: Any, dtype: Any = int) -> np.ndarray:
    """One-hot (or soft-max) rows -> the index of each row's largest entry. `dtype` is accepted and, as in
    candle_lib, not used: the classes are numpy's default integers."""
    return np.array([row.argmax() for row in y_one_hot])


def discretize_array(y: Any, bins: int = 5) -> np.ndarray:
    """Each value's bin among `bins` bins cut at the percentiles 100/bins, 200/bins, ... of `y`."""
    return np.digitize(y, _percentile_cuts(y, bins))


def discretize_dataframe(df: Any, col: Any, bins: int = 2, cutoffs: list | None = None) -> Any:
    """Column `col` of `df` replaced (in place) by its bin numbers: cut at `cutoffs`, or at the percentiles as
    discretize_array; returns `df`."""
    values = df[col]
    df[col] = np.digitize(values, _percentile_cuts(values, bins) if cutoffs is None else cutoffs)
    return df


def lookup(df: Any, query: str, ret: Any, keys: list, match: str = "match") -> list:
    """The distinct values of columns `ret` in the rows where a column of `keys` equals `query` (ignoring case),
    or contains it with match='contains'."""
    import pandas as pd

    mask = pd.Series(False, index=range(df.shape[0]))
    for key in keys:
        if match == "contains":
            mask |= df[key].str.contains(query.upper(), case=False)
        else:
            mask |= df[key].str.upper() == query.upper()
    return list(set(df[mask][ret].values.flatten().tolist()))


def _percentile_cuts(values: Any, bins: int) -> list:
    return [np.percentile(values, 100 / bins * (i + 1)) for i in range(bins - 1)]
