"""candle_lib's `load_csv_data`: features and labels by column, from a training (and a testing) CSV file.

In candle_lib's order: choose the columns (`y_cols` are labels; the features are `x_cols`, or every other column
less `drop_cols`; with `n_cols`, the first n_cols of them, or n_cols drawn with numpy's global generator when
`random_cols`, the `onehot_cols` and `x_cols` always kept), read `nrows` rows of each file, shuffle each with
`DataFrame.sample(frac=1, random_state=seed)`, stack training over testing rows, one-hot encode `onehot_cols`
(`name:value` columns, put first), scale the features of all rows together (scale_array; then `dtype`), split
training and testing again; with `validation_split` the LAST int(n_train * validation_split) training rows are
the validation rows. Returns, in this order and only those that apply: x_train, y_train, x_val, y_val, x_test,
y_test (DataFrames, or their values with return_dataframe=False), then the feature and label column names
with return_header=True; a single item is returned as a one-item list, as candle_lib does.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from playground.compat.candle._loaders import DEFAULT_SEED
from playground.compat.candle._scaling import scale_array


def load_csv_data(train_path: str, test_path: str | None = None, sep: str = ",", nrows: int | None = None,
                  x_cols: list | None = None, y_cols: list | None = None, drop_cols: list | None = None,
                  onehot_cols: list | None = None, n_cols: int | None = None, random_cols: bool = False,
                  shuffle: bool = False, scaling: str | None = None, dtype: Any = None,
                  validation_split: float | None = None, return_dataframe: bool = True,
                  return_header: bool = False, seed: int = DEFAULT_SEED) -> Any:
    import pandas as pd

    usecols, y_names = _columns(train_path, sep, x_cols, y_cols, drop_cols, onehot_cols, n_cols, random_cols)
    train = pd.read_csv(train_path, engine="c", sep=sep, nrows=nrows, usecols=usecols)
    test = pd.read_csv(test_path, engine="c", sep=sep, nrows=nrows, usecols=usecols) if test_path \
        else train[0:0].copy()
    if y_cols is None:
        y_names = []
    elif y_names is None:
        y_names = list(train[0:0][y_cols])
    if shuffle:
        train = train.sample(frac=1, random_state=seed)
        if test_path:
            test = test.sample(frac=1, random_state=seed)
    both = pd.concat([train, test])
    df_y, df_x = both[y_names], both.drop(y_names, axis=1)
    for col in onehot_cols or []:
        if col in y_names:
            df_y = _one_hot_first(df_y, col)
        else:
            df_x = _one_hot_first(df_x, col)
    if scaling is not None:
        df_x = pd.DataFrame(scale_array(df_x.values, scaling), index=df_x.index, columns=df_x.columns, dtype=dtype)
    parts = _partitions(df_x, df_y, train.shape[0], y_cols is not None, validation_split, bool(test_path))
    if not return_dataframe:
        parts = [part.values for part in parts]
    if return_header:
        parts += [df_x.columns.tolist(), df_y.columns.tolist()]
    return tuple(parts) if len(parts) > 1 else parts


def _columns(train_path: str, sep: str, x_cols: list | None, y_cols: list | None, drop_cols: list | None,
             onehot_cols: list | None, n_cols: int | None, random_cols: bool) -> tuple[list | None, list | None]:
    """(the columns to read, or None for all; the label names, or None when not yet known), from the header."""
    import pandas as pd

    if x_cols is None and drop_cols is None and n_cols is None:
        return None, None
    header = pd.read_csv(train_path, engine="c", sep=sep, nrows=0)
    features = header.copy()
    if y_cols is not None:
        features = features.drop(header[y_cols], axis=1)
    if drop_cols is not None:
        features = features.drop(header[drop_cols], axis=1)
    reserved = list(onehot_cols or []) + list(x_cols or [])
    available = features.shape[1]
    if n_cols and n_cols < available:
        chosen = sorted(np.random.choice(list(range(available)), n_cols, replace=False)) if random_cols \
            else list(range(n_cols))
        names = list(features[chosen])
        kept = reserved + [x for x in names if x not in reserved][:np.maximum(n_cols - len(reserved), 0)]
        x_names = [x for x in features if x in kept]
    elif x_cols is not None:
        x_names = list(features[x_cols])
    else:
        x_names = list(features.columns)
    if y_cols is None:
        return x_names, None
    y_names = list(header[y_cols])
    return y_names + x_names, y_names


def _one_hot_first(frame: Any, col: str) -> Any:
    import pandas as pd

    return pd.concat([pd.get_dummies(frame[col], prefix=col, prefix_sep=":"), frame.drop(col, axis=1)], axis=1)


def _partitions(df_x: Any, df_y: Any, n_train: int, with_y: bool, validation_split: float | None,
                with_test: bool) -> list:
    x_train, y_train, x_test, y_test = df_x[:n_train], df_y[:n_train], df_x[n_train:], df_y[n_train:]
    parts = [x_train, y_train] if with_y else [x_train]
    if validation_split and 0 < validation_split < 1:
        n_val = int(n_train * validation_split)
        # candle_lib's slices, kept: with n_val 0, [-0:] is every row and [:-0] none
        parts = [x_train[:-n_val], y_train[:-n_val]] if with_y else [x_train[:-n_val]]
        parts += [x_train[-n_val:], y_train[-n_val:]] if with_y else [x_train[-n_val:]]
    if with_test:
        parts += [x_test, y_test] if with_y else [x_test]
    return parts
