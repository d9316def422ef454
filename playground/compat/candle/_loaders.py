"""candle_lib's loaders of a training and a testing CSV file: `load_X_data`, `load_X_data2`,
`load_Xy_one_hot_data`, `load_Xy_one_hot_data2`, `load_Xy_data2`, `load_Xy_data_noheader`.

Their common steps, in candle_lib's order: read both files with pandas (a header row; with `n_cols`, only the
first n_cols + len(drop_cols) columns), shuffle each with `DataFrame.sample(frac=1, random_state=seed)`, take
the one-hot labels of `class_col` (pandas.get_dummies), drop `drop_cols`, convert to `dtype`, scale training
and testing rows together (scale_array), split them apart again; the `2` forms then take the FIRST
int(len(train) * validation_split) training rows as the validation rows. Arrays are numpy arrays.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from playground.compat.candle._labels import convert_to_class, to_categorical
from playground.compat.candle._scaling import scale_array

DEFAULT_SEED = 7102
DEFAULT_DATATYPE = np.float32


def load_X_data(train_file: str, test_file: str, drop_cols: list | None = None, n_cols: int | None = None,
                shuffle: bool = False, scaling: str | None = None, dtype: Any = DEFAULT_DATATYPE,
                seed: int = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray]:
    """(X_train, X_test): features only, no labels."""
    train, test = _read(train_file, test_file, drop_cols, n_cols, shuffle, seed)
    train, test = _dropped(train, drop_cols), _dropped(test, drop_cols)
    return _scaled(train.values.astype(dtype), test.values.astype(dtype), scaling)


def load_X_data2(train_file: str, test_file: str, drop_cols: list | None = None, n_cols: int | None = None,
                 shuffle: bool = False, scaling: str | None = None, validation_split: float = 0.1,
                 dtype: Any = DEFAULT_DATATYPE, seed: int = DEFAULT_SEED) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(X_train, X_val, X_test)."""
    x_train, x_test = load_X_data(train_file, test_file, drop_cols, n_cols, shuffle, scaling, dtype, seed)
    n_val = int(x_train.shape[0] * validation_split)
    return x_train[n_val:], x_train[:n_val], x_test


def load_Xy_one_hot_data(train_file: str, test_file: str, class_col: Any = None, drop_cols: list | None = None,
                         n_cols: int | None = None, shuffle: bool = False, scaling: str | None = None,
                         dtype: Any = DEFAULT_DATATYPE, seed: int = DEFAULT_SEED) -> tuple:
    """((X_train, y_train), (X_test, y_test)); y one-hot, one column per class of `class_col` (required)."""
    assert class_col is not None
    train, test = _read(train_file, test_file, drop_cols, n_cols, shuffle, seed)
    y_train, y_test = _one_hot(train, class_col), _one_hot(test, class_col)
    train, test = _dropped(train, drop_cols), _dropped(test, drop_cols)
    x_train, x_test = _scaled(train.values.astype(dtype), test.values.astype(dtype), scaling)
    return (x_train, y_train), (x_test, y_test)


def load_Xy_one_hot_data2(train_file: str, test_file: str, class_col: Any = None, drop_cols: list | None = None,
                          n_cols: int | None = None, shuffle: bool = False, scaling: str | None = None,
                          validation_split: float = 0.1, dtype: Any = DEFAULT_DATATYPE,
                          seed: int = DEFAULT_SEED) -> tuple:
    """((X_train, y_train), (X_val, y_val), (X_test, y_test)); y one-hot."""
    (x_train, y_train), (x_test, y_test) = load_Xy_one_hot_data(train_file, test_file, class_col, drop_cols,
                                                                n_cols, shuffle, scaling, dtype, seed)
    n_val = int(x_train.shape[0] * validation_split)
    return (x_train[n_val:], y_train[n_val:]), (x_train[:n_val], y_train[:n_val]), (x_test, y_test)


def load_Xy_data2(train_file: str, test_file: str, class_col: Any = None, drop_cols: list | None = None,
                  n_cols: int | None = None, shuffle: bool = False, scaling: str | None = None,
                  validation_split: float = 0.1, dtype: Any = DEFAULT_DATATYPE, seed: int = DEFAULT_SEED) -> tuple:
    """As load_Xy_one_hot_data2, with each y the index of its class (convert_to_class)."""
    assert class_col is not None
    parts = load_Xy_one_hot_data2(train_file, test_file, class_col, drop_cols, n_cols, shuffle, scaling,
                                  validation_split, dtype, seed)
    return tuple((x, convert_to_class(y)) for x, y in parts)


def load_Xy_data_noheader(train_file: str, test_file: str, classes: int, usecols: list | None = None,
                          scaling: str | None = None, dtype: Any = DEFAULT_DATATYPE) -> tuple:
    """(X_train, Y_train, X_test, Y_test) from files without a header: the first column is the class (one-hot
    over `classes`), the rest the features."""
    import pandas as pd

    train, test = (pd.read_csv(path, header=None, usecols=usecols).values.astype(dtype)
                   for path in (train_file, test_file))
    y_train, y_test = (to_categorical(part[:, 0].astype("int"), classes) for part in (train, test))
    x_train, x_test = _scaled(train[:, 1:].astype(dtype), test[:, 1:].astype(dtype), scaling)
    return x_train, y_train, x_test, y_test


def _read(train_file: str, test_file: str, drop_cols: list | None, n_cols: int | None, shuffle: bool,
          seed: int) -> tuple[Any, Any]:
    import pandas as pd

    usecols = list(range(n_cols + len(drop_cols or []))) if n_cols else None   # the dropped ones are read too
    frames = [pd.read_csv(path, engine="c", usecols=usecols) for path in (train_file, test_file)]
    if shuffle:
        frames = [frame.sample(frac=1, random_state=seed) for frame in frames]
    return frames[0], frames[1]


def _one_hot(frame: Any, class_col: Any) -> np.ndarray:
    import pandas as pd

    return pd.get_dummies(frame[class_col]).values


def _dropped(frame: Any, drop_cols: list | None) -> Any:
    return frame.drop(columns=list(drop_cols)) if drop_cols is not None else frame


def _scaled(x_train: np.ndarray, x_test: np.ndarray, scaling: str | None) -> tuple[np.ndarray, np.ndarray]:
    """The two parts scaled together (the statistics over all rows), then apart again."""
    mat = np.concatenate((x_train, x_test), axis=0)
    if scaling is not None:
        mat = scale_array(mat, scaling)
    return mat[:x_train.shape[0]], mat[x_train.shape[0]:]
