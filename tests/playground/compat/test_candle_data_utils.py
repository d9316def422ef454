"""candle_lib's data utilities in playground's candle (playground/compat/candle: _scaling, _labels, _loaders,
_csv_data) give candle_lib's arrays. candle_lib is not installable here, so each expected array is computed
independently, the way candle_lib documents and computes it: scikit-learn's scalers and imputer, pandas'
read_csv, sample, get_dummies and slicing."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.impute import SimpleImputer
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, StandardScaler

import playground.compat.candle as candle

SCALERS = {"minmax": MinMaxScaler, "maxabs": MaxAbsScaler, "std": StandardScaler}
TOLERANCE = 1e-12


def features(dtype) -> np.ndarray:
    """Columns of very different ranges, a constant one, a nearly constant one, and NaNs."""
    rng = np.random.RandomState(4)
    mat = rng.randn(60, 6) * [1, 10, 100, 1e-3, 0, 5] + [0, 3, -2, 7, 4, 1]
    mat[3, 1] = mat[7, 4] = mat[11, 0] = np.nan
    return mat.astype(dtype)


def assert_same(ours: np.ndarray, expected: np.ndarray) -> None:
    ours, expected = np.asarray(ours), np.asarray(expected)
    assert ours.shape == expected.shape and ours.dtype == expected.dtype
    if ours.dtype.kind != "f":
        assert np.array_equal(ours, expected)      # labels: exactly
        return
    assert np.array_equal(np.isnan(ours), np.isnan(expected))
    assert np.nanmax(np.abs(ours - expected), initial=0.0) <= TOLERANCE


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scaling", ["minmax", "maxabs", "std"])
def test_scale_array_gives_scikit_learns_scaled_array_in_place(scaling, dtype):
    mat = features(dtype)
    expected = SCALERS[scaling](copy=False).fit_transform(features(dtype))
    ours = candle.scale_array(mat, scaling)
    assert_same(ours, expected)
    assert ours is mat                                     # copy=False, as candle_lib asks of scikit-learn


def test_scale_array_without_a_scaling_returns_the_array_and_scales_integers_as_floats():
    ints = np.arange(12).reshape(4, 3)
    assert candle.scale_array(ints, None) is ints and candle.scale_array(ints, "None") is ints
    assert_same(candle.scale_array(ints, "std"), StandardScaler().fit_transform(ints))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_impute_and_scale_array_fills_each_nan_with_its_columns_mean_then_scales(dtype):
    expected = features(dtype)
    SimpleImputer(strategy="mean", copy=False).fit_transform(expected)
    expected = MinMaxScaler(copy=False).fit_transform(expected)
    assert_same(candle.impute_and_scale_array(features(dtype), "minmax"), expected)


@pytest.mark.parametrize("imputing, dropna", [("mean", "all"), ("median", "any"), ("most_frequent", "all"),
                                              (None, "any")])
@pytest.mark.parametrize("scaling", ["std", "minmax", None])
def test_drop_impute_and_scale_dataframe_as_pandas_and_scikit_learn_compute_it(scaling, imputing, dropna):
    frame = pd.DataFrame(features(np.float64), columns=list("abcdef")).assign(empty=np.nan)
    frame.iloc[5, 2] = frame.iloc[9, 2] = 1.5          # repeated values, for most_frequent
    kept = frame.dropna(axis=1, how=dropna)
    mat = kept.values if imputing is None else SimpleImputer(strategy=imputing).fit_transform(kept.values)
    if scaling is not None:
        mat = SCALERS[scaling]().fit_transform(mat)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = candle.drop_impute_and_scale_dataframe(frame, scaling, imputing, dropna)
    assert list(ours.columns) == list(kept.columns) and list(ours.index) == list(range(len(frame)))
    assert_same(ours.values, mat)


def test_label_encodings_are_one_hot_rows_and_their_argmax():
    y = np.array([2, 0, 3, 1, 2])
    assert_same(candle.to_categorical(y), np.eye(4, dtype=np.float32)[y])
    assert_same(candle.to_categorical(y.reshape(-1, 1), 6), np.eye(6, dtype=np.float32)[y])
    soft = np.random.RandomState(0).rand(9, 4)
    assert_same(candle.convert_to_class(soft), np.argmax(soft, axis=1))
    values = np.random.RandomState(1).rand(40)
    assert_same(candle.discretize_array(values, 4), np.digitize(values, np.percentile(values, [25, 50, 75])))


@pytest.fixture
def pilot1_files(tmp_path) -> tuple[Path, Path]:
    """A training and a testing file in Pilot1's layout: case_id, cancer_type (a name), gene columns."""
    rng = np.random.RandomState(2)
    paths = []
    for name, rows in (("train", 23), ("test", 9)):
        frame = pd.DataFrame(rng.rand(rows, 5) * [1, 50, 0.01, 3, 7], columns=[f"g{i}" for i in range(5)])
        frame.insert(0, "cancer_type", rng.choice(["BRCA", "LUAD", "KIRC"], rows))
        frame.insert(0, "case_id", [f"{name}{i}" for i in range(rows)])
        frame.to_csv(tmp_path / f"{name}.csv", index=False)
        paths.append(tmp_path / f"{name}.csv")
    return paths[0], paths[1]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shuffle", [False, True])
def test_load_xy_one_hot_data2_as_p1b2_calls_it(pilot1_files, shuffle, dtype):
    train_file, test_file = pilot1_files
    frames = [pd.read_csv(f) for f in pilot1_files]
    if shuffle:
        frames = [f.sample(frac=1, random_state=2017) for f in frames]
    y_train, y_test = (pd.get_dummies(f[["cancer_type"]]).values for f in frames)
    x_train, x_test = (f.drop(columns=["case_id", "cancer_type"]).values.astype(dtype) for f in frames)
    mat = MinMaxScaler(copy=False).fit_transform(np.concatenate([x_train, x_test]))
    n_val = int(23 * 0.2)
    expected = [mat[n_val:23], y_train[n_val:], mat[:n_val], y_train[:n_val], mat[23:], y_test]
    (a, b), (c, d), (e, f) = candle.load_Xy_one_hot_data2(
        str(train_file), str(test_file), class_col=["cancer_type"], drop_cols=["case_id", "cancer_type"], n_cols=0,
        shuffle=shuffle, scaling="minmax", validation_split=0.2, dtype=dtype, seed=2017)
    for ours, want in zip((a, b, c, d, e, f), expected):
        assert_same(ours, want)
    (_, classes), _, _ = candle.load_Xy_data2(str(train_file), str(test_file), class_col=["cancer_type"],
                                              drop_cols=["case_id", "cancer_type"], shuffle=shuffle,
                                              scaling="minmax", validation_split=0.2, dtype=dtype, seed=2017)
    assert_same(classes, np.argmax(y_train[n_val:], axis=1))


@pytest.mark.parametrize("scaling", ["minmax", "std", None])
def test_load_csv_data_as_p1b1_calls_it(pilot1_files, scaling):
    train_file, test_file = pilot1_files
    frames = [pd.read_csv(f).sample(frac=1, random_state=7) for f in pilot1_files]
    both = pd.concat(frames)
    y = pd.get_dummies(both["cancer_type"], prefix="cancer_type", prefix_sep=":")
    x = both.drop(columns=["case_id", "cancer_type"]).values
    if scaling is not None:
        x = SCALERS[scaling]().fit_transform(x).astype(np.float32)
    n_val = int(23 * 0.1)                           # the LAST training rows, unlike the loaders above
    expected = [x[:23 - n_val], y.values[:23 - n_val], x[23 - n_val:23], y.values[23 - n_val:23], x[23:],
                y.values[23:], [f"g{i}" for i in range(5)], list(y.columns)]
    ours = candle.load_csv_data(str(train_file), str(test_file), x_cols=None, y_cols=["cancer_type"],
                                drop_cols=["case_id"], onehot_cols=["cancer_type"], n_cols=0, shuffle=True,
                                scaling=scaling, dtype=np.float32, validation_split=0.1, return_dataframe=False,
                                return_header=True, seed=7)
    assert len(ours) == 8 and ours[6:] == tuple(expected[6:])
    for got, want in zip(ours[:6], expected[:6]):
        assert_same(got, want)


def test_load_csv_data_returns_dataframes_and_a_single_part_as_a_list(pilot1_files):
    train_file, _ = pilot1_files
    only = candle.load_csv_data(str(train_file), x_cols=["g1", "g3"])
    assert isinstance(only, list) and len(only) == 1
    assert only[0].equals(pd.read_csv(train_file, usecols=["g1", "g3"]))
