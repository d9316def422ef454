"""CANDLE's list values written as one string, split as Supervisor's runner splits them
(playground/candle/list_values.py)."""
from __future__ import annotations

import pytest

from playground.candle.list_values import ListValueError, list_value_problems, split_candle_list


@pytest.mark.parametrize("value, expected", [
    ("1500 500", [1500, 500]), ("978 978 978", [978, 978, 978]), ("0.5 1 2", [0.5, 1.0, 2.0]),
    ("-1 2", [-1, 2]), ("1.0e-3 1", [0.001, 1.0]),
    ("1500", None), ("relu", None), ("relu tanh", None), ("", None), (1500, None), ([1, 2], None),
])
def test_strings_of_numbers_are_lists_of_the_first_numbers_kind(value, expected):
    assert split_candle_list(value) == expected


@pytest.mark.parametrize("value, bad", [("1500 5.5", "5.5"), ("1e-3 1", "1e-3"), ("1500 x", "x")])
def test_an_integer_list_with_a_part_that_is_not_an_integer_is_refused_naming_it(value, bad):
    # the first part decides the kind (a '.' makes floats), as Supervisor's runner, which crashes on these
    with pytest.raises(ListValueError, match=rf"'{value}' is a CANDLE list .* but '{bad}' is not an integer"):
        split_candle_list(value)


def test_the_problems_of_many_points_name_where_and_the_key():
    points = [("upf.txt, line 1 (id a)", {"dense": "1500 500", "epochs": 2}),
              ("upf.txt, line 2 (id b)", {"dense": "1500 x", "conv": "3 3.5"})]
    assert [p.split(": ", 2)[:2] for p in list_value_problems(points)] == [
        ["upf.txt, line 2 (id b)", "dense"], ["upf.txt, line 2 (id b)", "conv"]]
    assert list_value_problems(points[:1]) == []
