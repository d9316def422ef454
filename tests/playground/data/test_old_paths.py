"""Code written against data/'s flat layout (benchmarks, user inputs) keeps importing the same modules."""
import importlib

import pytest

from playground.data.images import augment, lmdb_dataset
from playground.data.records import db_records, record_format


@pytest.mark.parametrize("old, module", [("playground.data.lmdb_dataset", lmdb_dataset),
                                         ("playground.data.augment", augment),
                                         ("playground.data.record_format", record_format),
                                         ("playground.data.db_records", db_records)])
def test_an_old_data_path_is_the_moved_module_itself(old, module):
    assert importlib.import_module(old) is module
