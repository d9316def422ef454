"""`--set KEY=VALUE` has one grammar (playground/options/user_input/set_items.py) for an opts run, a CANDLE script,
a Determined experiment's hyperparameters and a defaults file's values; each context keeps its key rule, and
every spelling that worked before gives the value it gave."""
from __future__ import annotations

import json

import pytest

from playground.candle.runner import CandleCommand, command_sets
from playground.determined.trial_setup import parse_sets
from playground.options.layers import OptsError, literal_value, sets_layer
from playground.options.user_input.set_items import HPARAM_KEY, OPTS_KEY, PARAM_KEY, parse_value, split_set
from tests.conftest import run_cli, tiny_opts


def test_an_opts_run_reads_true_and_none_as_python_does_as_a_candle_run_always_did(tmp_path):
    """On main `--set input.shuffle_train=False` was the string 'False' for an opts run (a type error) and False
    for a CANDLE run: one grammar now, and the run's resolved opts say so."""
    opts = tmp_path / "opts.json"
    opts.write_text(json.dumps({"opts": tiny_opts()}))
    done = run_cli("--parameters-file", str(opts), "--set", "input.shuffle_train=False",
                   "--set", "model_param.pretrained_model=None", "--set", "output.ckpt_keep_mode='linear'",
                   "--dry-run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    resolved = json.loads(done.stdout.split("resolved opts:\n", 1)[1])["opts"]
    assert resolved["input"]["shuffle_train"] is False
    assert resolved["model_param"]["pretrained_model"] is None
    assert resolved["output"]["ckpt_keep_mode"] == "linear"
    assert command_sets(CandleCommand("s.py", sets=["flag=True"])) == {"flag": True}


@pytest.mark.parametrize("text, value", [
    ("20", 20), ("1e-4", 1e-4), ("true", True), ("null", None), ("[8, 16]", [8, 16]), ('"text"', "text"),
    ('{"a": 1}', {"a": 1}), ("relu", "relu"), ("/data/train", "/data/train"), (" spaced ", " spaced "), ("", ""),
    ("a=b", "a=b"), ("gs://bucket/x", "gs://bucket/x"),
])
def test_the_spellings_an_opts_run_took_keep_their_values(text, value):
    """JSON literals, else the text as written (untrimmed, `=` kept after the first): as before the one grammar."""
    assert split_set(f"section.key={text}") == ("section.key", value)


@pytest.mark.parametrize("text, value", [
    ("True", True), ("None", None), ("'relu'", "relu"), ("FALSE", False), ("[128,64]", [128, 64]), ("3", 3),
    ("1500 500", "1500 500"),
])
def test_the_python_literals_a_candle_run_took_keep_their_values(text, value):
    """CANDLE's spellings (its defaults files are Python literals) keep their values, on --set and in the file."""
    assert command_sets(CandleCommand("s.py", sets=[f"key={text}"]))["key"] == (
        value if text != "1500 500" else [1500, 500])    # a CANDLE list string, split as before
    assert literal_value(f"  {text}  ") == value


def test_values_json_cannot_hold_stay_text_so_the_resolved_opts_can_be_written():
    """A complex number, bytes or a set would be Python literals, but opts.json could not hold them."""
    assert [parse_value(t) for t in ("3j", "b'x'", "{1, 2}", "(1, 2)")] == ["3j", "b'x'", "{1, 2}", [1, 2]]


def test_each_context_keeps_its_key_rule_and_its_message():
    assert split_set("epochs=3", PARAM_KEY) == ("epochs", 3)
    assert split_set("optimizer.lr=0.1", HPARAM_KEY) == ("optimizer.lr", 0.1)
    assert parse_sets(["layers=2", "optimizer.kind=adam"]) == {"layers": 2, "optimizer.kind": "adam"}
    with pytest.raises(OptsError, match=r"--set 'epochs=3': expected section.key=value, e.g. --set "
                                        r"epoch_iter.num_epochs=20"):
        split_set("epochs=3", OPTS_KEY)
    with pytest.raises(OptsError, match=r"--set 'epochs': expected key=value, e.g. --set epochs=20"):
        command_sets(CandleCommand("s.py", sets=["epochs"]))
    with pytest.raises(OptsError) as err:
        parse_sets(["lr", "optimizer..lr=1"])
    assert err.value.problems == [
        "--set 'lr': expected HPARAM=VALUE (dotted for a nested group: optimizer.lr=0.1)",
        "--set 'optimizer..lr=1': expected HPARAM=VALUE (dotted for a nested group: optimizer.lr=0.1)"]


def test_the_opts_set_layer_nests_dotted_keys_and_reports_every_bad_item_at_once():
    assert sets_layer(["a.b=1", "a.c.d=x", "a.b=2"]) == {"a": {"b": 2, "c": {"d": "x"}}}
    with pytest.raises(OptsError) as err:
        sets_layer(["nodot=1", "a.b=1", "=2"])
    assert len(err.value.problems) == 2
