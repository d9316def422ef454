"""candle_lib's scaling and imputing of feature arrays: `scale_array`, `impute_and_scale_array`,
`drop_impute_and_scale_dataframe`.

candle_lib calls scikit-learn's MinMaxScaler, MaxAbsScaler, StandardScaler and SimpleImputer for these; the
same arithmetic is done here with numpy, in the same order and precision, so the arrays are the same (tests
compare with scikit-learn): a column's NaNs are ignored by the statistics and stay NaN; a constant column is
divided by 1, not 0. Like candle_lib (`copy=False`), a float array is scaled in place and returned; any other
array is converted to float64 first.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

def scale_array(mat: np.ndarray, scaling: str | None = None) -> np.ndarray:
    """'maxabs' (each column / its largest |value|), 'minmax' (to [0, 1]), any other string 'std' (mean 0,
    standard deviation 1); None or 'none' returns `mat` untouched."""
    if scaling is None or scaling.lower() == "none":
        return mat
    mat = _float_array(mat)
    if scaling == "maxabs":
        mat /= _nonzero(_nanmax(np.abs(mat)))
    elif scaling == "minmax":
        low = _nanmin(mat)
        scale = 1 / _nonzero(_nanmax(mat) - low)
        mat *= scale
        mat += 0 - low * scale
    else:
        mean, variance, count = _mean_and_variance(mat)
        scale = np.sqrt(variance)
        scale[_constant(variance, mean, count)] = 1.0
        mat -= mean.astype(mat.dtype)      # the statistics in the array's precision first, as scikit-learn
        mat /= scale.astype(mat.dtype)
    return mat


def impute_and_scale_array(mat: np.ndarray, scaling: str | None = None) -> np.ndarray:
    """Each NaN replaced in place by its column's mean, then scale_array(mat, scaling).

    As in candle_lib, the imputing happens in `mat` itself: when a column has no value at all (nothing to take a
    mean of), candle_lib's imputer works on a copy that is thrown away, so `mat` is scaled with its NaNs kept."""
    mat = np.asarray(mat)
    if mat.dtype.kind == "f":        # (an integer array has no NaN to fill)
        means = _column_statistic(mat, "mean")
        if not np.isnan(means).any():
            _fill(mat, means)
    return scale_array(mat, scaling)


def drop_impute_and_scale_dataframe(df: Any, scaling: str = "std", imputing: str = "mean",
                                    dropna: str = "all") -> Any:
    """A new DataFrame: columns dropped by `dropna` ('all': all NaN; 'any': any NaN; None: an all-NaN column
    becomes 0 in `df` itself), NaNs imputed with the column's 'mean', 'median' or 'most_frequent' (None or 'none':
    not imputed), then scaled ('maxabs', 'minmax', else 'std'; None or 'none': not scaled). The result has a
    fresh 0..n-1 index, as candle_lib's."""
    import pandas as pd

    if dropna:
        df = df.dropna(axis=1, how=dropna)
    else:
        empty = df.columns[df.notnull().sum() == 0]
        df[empty] = 0
    if imputing is None or imputing.lower() == "none":
        mat = df.values
    else:
        mat = _imputed_copy(df.values, imputing)
    if scaling is None or scaling.lower() == "none":
        return pd.DataFrame(mat, columns=df.columns)
    return pd.DataFrame(scale_array(np.array(mat), scaling), columns=df.columns)


def _imputed_copy(values: np.ndarray, strategy: str) -> np.ndarray:
    """A float copy of `values` with NaNs filled; columns without any value are left out (with the warning
    scikit-learn gives), as candle_lib's imputer does."""
    if strategy not in ("mean", "median", "most_frequent"):
        raise ValueError(f"drop_impute_and_scale_dataframe: imputing {strategy!r}: expected 'mean', 'median', "
                         "'most_frequent' or None")
    mat = np.array(values, dtype=values.dtype if values.dtype.kind == "f" else np.float64)
    statistics = _column_statistic(mat, strategy)
    empty = np.isnan(statistics)
    if empty.any():
        warnings.warn(f"Skipping features without any observed values: {np.flatnonzero(empty)}. At least one "
                      f"non-missing value is needed for imputation with strategy='{strategy}'.", stacklevel=3)
        mat, statistics = mat[:, ~empty], statistics[~empty]
    _fill(mat, statistics)
    return mat


def _column_statistic(mat: np.ndarray, strategy: str) -> np.ndarray:
    """Per column, over its non-NaN values: the mean, median or most frequent value (the smallest of ties);
    NaN for a column without values."""
    masked = np.ma.masked_array(mat, mask=np.isnan(mat))
    if strategy in ("mean", "median"):
        statistic = np.ma.mean(masked, axis=0) if strategy == "mean" else np.ma.median(masked, axis=0)
        values = np.array(np.ma.getdata(statistic), dtype=np.float64 if strategy == "median" else None)
        values[np.ma.getmaskarray(statistic)] = np.nan
        return values
    result = np.empty(mat.shape[1])
    for column in range(mat.shape[1]):
        present = mat[~np.isnan(mat[:, column]), column]
        if present.size == 0:
            result[column] = np.nan
        else:
            values, counts = np.unique(present, return_counts=True)
            result[column] = values[np.argmax(counts)]
    return result


def _fill(mat: np.ndarray, statistics: np.ndarray) -> None:
    rows, columns = np.nonzero(np.isnan(mat))
    mat[rows, columns] = statistics[columns].astype(mat.dtype, copy=False)


def _float_array(mat: Any) -> np.ndarray:
    mat = np.asarray(mat)
    return mat if mat.dtype.kind == "f" else mat.astype(np.float64)


def _nanmin(mat: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # an all-NaN column stays NaN
        return np.nanmin(mat, axis=0)


def _nanmax(mat: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmax(mat, axis=0)


def _nonzero(scale: np.ndarray) -> np.ndarray:
    """`scale` with the entries that are 0 up to rounding (< 10 eps of its dtype) replaced by 1."""
    scale = np.array(scale, copy=True)
    scale[scale < 10 * np.finfo(scale.dtype).eps] = 1.0
    return scale


def _mean_and_variance(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per column, over non-NaN values, with float64 sums: mean, population variance by the corrected two-pass
    formula (Chan, Golub and LeVeque), and the count of values."""
    missing = np.isnan(mat)
    count = mat.shape[0] - missing.sum(axis=0, dtype=np.float64)
    total = np.nansum(mat, axis=0, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
        deviation = mat - mean
        correction = np.nansum(deviation, axis=0, dtype=np.float64)
        deviation **= 2
        variance = (np.nansum(deviation, axis=0, dtype=np.float64) - correction ** 2 / count) / count
    return mean, variance, count


def _constant(variance: np.ndarray, mean: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Columns whose variance is within the rounding error of the two-pass formula: constant ones."""
    eps = np.finfo(np.float64).eps
    return variance <= count * eps * variance + (count * mean * eps) ** 2
