"""The generated opts reference: JSON Schema and docs/opts.md (playground/options/schema.py)."""
from __future__ import annotations

import json

from jsonschema import Draft202012Validator

from playground.options.schema import json_schema, markdown
from tests.conftest import REPO


def check(value, schema: dict) -> list[str]:
    """Every way `value` breaks `schema` (draft 2020-12, by the jsonschema package), as 'path: message' lines."""
    Draft202012Validator.check_schema(schema)
    return [f"{error.json_path}: {error.message}" for error in Draft202012Validator(schema).iter_errors(value)]


def experiment_files():
    return sorted(p for p in (REPO / "experiments").rglob("*.json"))


def test_the_schema_accepts_every_experiment_file():
    schema = json_schema()
    files = experiment_files()
    assert files
    for path in files:
        problems = check(json.loads(path.read_text()), schema)
        assert not problems, f"{path}: {problems}"


def test_the_schema_rejects_wrong_types_and_missing_mandatory_keys():
    schema = json_schema()
    opts = json.loads((REPO / "experiments" / "smoke.json").read_text())
    opts["opts"]["epoch_iter"]["batch_per_device"] = "32a"
    del opts["opts"]["distributed"]["num_shards"]
    problems = check(opts, schema)
    assert "$.opts.epoch_iter.batch_per_device: '32a' is not of type 'integer'" in problems
    assert "$.opts.distributed: 'num_shards' is a required property" in problems


def test_component_declared_keys_appear_in_the_schema():
    properties = json_schema()["properties"]["opts"]["properties"]
    assert properties["input"]["properties"]["synthetic_shape"]["default"] == [3, 32, 32]
    assert "mlp_hidden" in properties["model_param"]["properties"]


def test_docs_opts_md_is_up_to_date():
    on_disk = (REPO / "docs" / "opts.md").read_text()
    assert on_disk == markdown(), "docs/opts.md is stale: run `playground schema --format markdown > docs/opts.md`"


def test_the_opts_reference_names_the_components_that_read_a_framework_key():
    rows = {line.split("|")[1].strip(): line for line in markdown().splitlines() if line.startswith("| `")}
    assert "caffe2_resnet50_default_forward" in rows["`bn_epsilon`"].split("|")[5]
    assert "caffe2_resnet50_default_forward" in rows["`memonger`"].split("|")[5]
    assert "explicit_resnet_forward" in rows["`memonger`"].split("|")[5]
    assert "forward passes" not in rows["`bn_momentum`"]


def test_the_schema_wants_a_trial_class_or_the_components_it_replaces():
    schema = json_schema()
    opts = json.loads((REPO / "experiments" / "digits_trial.json").read_text())
    assert not check(opts, schema)
    del opts["opts"]["model"]["trial_py"]
    assert any(p.startswith("$.opts: ") and "is not valid under any of the given schemas" in p
               for p in check(opts, schema))
