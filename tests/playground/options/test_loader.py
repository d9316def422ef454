"""Layering, defaults and validation of the opts (playground/options/loader.py)."""
from __future__ import annotations

import copy
import json

import pytest

from playground.options.loader import resolve_opts
from playground.options.layers import OptsError, load_blob, load_defaults_file, merge
from playground.options.builtin import BUILTIN_OPTS, SECTIONS
from tests.conftest import DATA, load_experiment


def resolve(*layers, check_devices=False):
    return resolve_opts(list(layers), check_devices=check_devices)


def smoke():
    return copy.deepcopy(load_experiment("smoke.json"))


def problems_of(*layers, check_devices=False) -> list[str]:
    with pytest.raises(OptsError) as err:
        resolve(*layers, check_devices=check_devices)
    return err.value.problems


def test_every_precedence_layer_wins_over_the_one_below():
    base = smoke()
    del base["model_param"]["base_learning_rate"]      # built-in default 0.1
    del base["input"]["synthetic_train_size"]          # component-declared default 1024
    assert resolve(("blob", base)).opts["model_param"]["base_learning_rate"] == 0.1
    assert resolve(("blob", base)).opts["input"]["synthetic_train_size"] == 1024

    defaults = {"model_param": {"base_learning_rate": 0.3}, "input": {"synthetic_train_size": 500},
                "epoch_iter": {"num_epochs": 9}}
    layered = resolve(("defaults", defaults), ("blob", base)).opts
    assert layered["model_param"]["base_learning_rate"] == 0.3      # defaults file > built-in
    assert layered["input"]["synthetic_train_size"] == 500          # defaults file > component default
    assert layered["epoch_iter"]["num_epochs"] == 3                 # blob > defaults file

    sets = {"epoch_iter": {"num_epochs": 7}}
    assert resolve(("defaults", defaults), ("blob", base), ("--set", sets)).opts["epoch_iter"]["num_epochs"] == 7


def test_component_default_overrides_builtin_default():
    # model_param.num_classes is built-in (null); synthetic_input declares 10
    base = smoke()
    del base["input"]["num_classes"]
    assert resolve(("blob", base)).opts["input"]["num_classes"] == 10


def test_malformed_json_names_line_and_column():
    text = '{"opts": {\n  "input": {"imsize": 32,}\n}}'
    with pytest.raises(OptsError) as err:
        load_blob(text, "--parameters-json")
    message = str(err.value)
    assert "--parameters-json: malformed JSON at line 2, column" in message
    assert "^" in message


def test_blob_without_opts_key_is_explained():
    with pytest.raises(OptsError, match=r'of the form \{"opts"'):
        load_blob('{"input": {}}', "x.json")


def test_wrong_type_names_dotted_path_expected_and_value_and_origin():
    problems = problems_of(("blob", smoke()), ("--set", {"epoch_iter": {"batch_per_device": "32a"}}))
    assert problems == ['opts.epoch_iter.batch_per_device: expected a positive integer, got "32a" (from --set)']


def test_all_problems_are_reported_together():
    opts = smoke()
    opts["epoch_iter"]["num_epochs"] = -1
    opts["input"]["color_jitter"] = "yes"
    del opts["distributed"]["num_shards"]
    problems = problems_of(("blob", opts))
    assert any(p.startswith("opts.epoch_iter.num_epochs: expected a non-negative integer, got -1") for p in problems)
    assert any(p.startswith('opts.input.color_jitter: expected true or false, got "yes"') for p in problems)
    assert any(p.startswith("opts.distributed.num_shards: missing; it is mandatory") for p in problems)


def test_missing_mandatory_keys():
    opts = smoke()
    del opts["epoch_iter"]["num_test_iter"]        # mandatory
    opts["model"]["forward_pass_py"] = ""          # present but empty
    problems = problems_of(("blob", opts))
    assert any(p.startswith("opts.epoch_iter.num_test_iter: missing; it is mandatory") for p in problems)
    assert any(p.startswith("opts.model.forward_pass_py: must not be empty") for p in problems)


CAFFE2_ONLY = {"model.model_name_py": "", "model.rendezvous_py": "rendezvous_env", "output.gen_output_py": "",
               "model_param.pretrained_model": "", "model_param.memonger": False,
               "model_param.combine_spatial_bn": False}


def test_keys_only_the_caffe2_components_need_are_optional_with_the_defaults_of_the_readme_blob():
    opts = smoke()
    for path in CAFFE2_ONLY:
        section, key = path.split(".")
        del opts[section][key]
    resolved = resolve(("blob", opts)).opts
    assert {path: resolved[path.split(".")[0]][path.split(".")[1]] for path in CAFFE2_ONLY} == CAFFE2_ONLY


def _leaves(tree, prefix=""):
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _leaves(value, f"{prefix}.{key}" if prefix else key)
    else:
        yield prefix, tree


def test_the_readme_blob_resolves_to_the_opts_it_resolved_to_before_the_caffe2_only_keys_became_optional(tmp_path):
    """tests/data/caffe2_shaped_opts.json: a blob of our own with every key and component name of the Caffe2
    Playground README's blob, in its sections and order (values of our own); caffe2_shaped_resolved.json: its
    resolved opts, as the code before this change resolved them; every key keeps its value (later keys may be
    added, with defaults that change nothing)."""
    from playground.cli import main as playground_main
    data = tmp_path / "digits"
    assert playground_main(["make-lmdb", "--digits", str(data), "--test-fraction", "0.2", "--no-progress"]) == 0
    opts = json.loads((DATA / "caffe2_shaped_opts.json").read_text())["opts"]
    opts["distributed"].update(num_gpus=0, num_cpus=1)
    opts["input"].update(train_input_path=str(data / "train"), test_input_path=str(data / "test"))
    resolved = json.loads(json.dumps(resolve(("blob", opts)).opts).replace(str(data), "DIGITS"))
    before = json.loads((DATA / "caffe2_shaped_resolved.json").read_text())
    metrics_now = resolved["output"].pop("metrics")
    metrics_before = before["output"].pop("metrics")
    assert [{k: v for k, v in m.items() if k != "mode"} for m in metrics_now] == metrics_before
    now = dict(_leaves(resolved))
    assert {path: now.get(path, "(missing)") for path, _ in _leaves(before)} == dict(_leaves(before))


def test_nullable_keys_accept_null_and_empty():
    opts = smoke()
    opts["model_param"].update(pretrained_model=None, combine_spatial_bn="", max_concurrent_distributed_ops=None)
    resolved = resolve(("blob", opts)).opts
    assert resolved["model_param"]["pretrained_model"] is None


def test_keys_the_original_crashed_on_get_defaults():
    opts = smoke()
    for key in ("num_layer", "engine"):
        opts["model_param"].pop(key, None)
    del opts["model"]["additional_override_py"]
    resolved = resolve(("blob", opts)).opts
    assert resolved["model_param"]["num_layer"] == 50
    assert resolved["model_param"]["engine"] == ""
    assert resolved["model"]["additional_override_py"] == ""


def test_exactly_one_update_rule():
    both = smoke()
    both["model"]["parameter_update_py"] = "sgd_optimizer"
    assert any("exactly one of parameter_update_py and optimizer_py" in p and "both are set" in p
               for p in problems_of(("blob", both)))
    neither = smoke()
    neither["model"]["optimizer_py"] = ""
    assert any("neither is set" in p for p in problems_of(("blob", neither)))


def test_gpus_without_cuda_say_how_to_run_on_cpu():
    opts = smoke()
    opts["distributed"]["num_gpus"] = 2
    problems = problems_of(("blob", opts), check_devices=True)
    assert any("this machine has no CUDA device" in p and "--set distributed.num_gpus=0" in p for p in problems)


def test_unknown_key_is_kept_with_a_warning_naming_the_closest_key():
    opts = smoke()
    opts["model_param"]["wieght_decay"] = 8
    opts["my_section"] = {"x": 1}
    resolved = resolve(("blob", opts))
    assert resolved.opts["model_param"]["wieght_decay"] == 8
    assert any("opts.model_param.wieght_decay: not a known key" in w and "model_param.weight_decay" in w
               for w in resolved.warnings)
    assert any(w.startswith("opts.my_section: unknown section") for w in resolved.warnings)


def test_original_internal_keys_are_accepted_and_ignored_with_one_note():
    opts = smoke()
    opts["input"].update(namespace="aml", table="imagenet_data", column_handle="h", label_type=0,
                         train_partition={"ds": "2017-07-31"})
    resolved = resolve(("blob", opts))
    assert not resolved.warnings
    notes = [n for n in resolved.notes if n.startswith("accepted and ignored")]
    assert len(notes) == 1 and "input.train_partition.ds" in notes[0] and "input.namespace" in notes[0]


def test_metric_records_and_plots_are_checked():
    opts = smoke()
    opts["output"]["metrics"][0]["is_train"] = "true"
    opts["output"]["plots"][0]["ys"] = ["train_loss", "tset_loss"]
    problems = problems_of(("blob", opts))
    assert 'opts.output.metrics[0].is_train: expected true or false, got [{"name": "train_loss"' in problems[0] or \
        any(p.startswith("opts.output.metrics[0].is_train: expected true or false") for p in problems)
    assert any("opts.output.plots[0].ys[1]: 'tset_loss' is not a metric" in p and "test_loss" in p for p in problems)


def test_epoch_smaller_than_global_batch_is_an_error():
    opts = smoke()
    opts["epoch_iter"]["num_train_sample_per_epoch"] = 10
    assert any("is smaller than the global batch (32" in p for p in problems_of(("blob", opts)))


def test_defaults_file_dotted_bare_and_section_keys(tmp_path):
    path = tmp_path / "defaults.txt"
    path.write_text("[Global_Params]\nepoch_iter.num_epochs = 20\nbatch_per_device=64\n"
                    "color_jitter = True\n\n[model_param]\nlr_policy = 'step'\n")
    known = [o.path for o in BUILTIN_OPTS]
    layer = load_defaults_file(str(path), SECTIONS, known)
    assert layer == {"epoch_iter": {"num_epochs": 20, "batch_per_device": 64}, "input": {"color_jitter": True},
                     "model_param": {"lr_policy": "step"}}


def test_defaults_file_problems_name_file_section_and_key(tmp_path):
    path = tmp_path / "defaults.txt"
    path.write_text("[Global_Params]\nnum_things = 3\n[weird]\nx = 1\n")
    with pytest.raises(OptsError) as err:
        load_defaults_file(str(path), SECTIONS, [o.path for o in BUILTIN_OPTS])
    assert any("[Global_Params] num_things" in p for p in err.value.problems)
    assert any("unknown section [weird]" in p for p in err.value.problems)


def test_merge_tracks_the_layer_of_each_key():
    merged, origin = merge([("a", {"input": {"imsize": 1, "loadsize": 2}}), ("b", {"input": {"imsize": 3}})])
    assert merged == {"input": {"imsize": 3, "loadsize": 2}}
    assert origin["input.imsize"] == "b" and origin["input.loadsize"] == "a"


def test_a_blob_of_the_caffe2_readme_shape_is_accepted_with_only_its_paths_and_devices_changed(tmp_path):
    from playground.cli import main as playground_main
    data = tmp_path / "digits"
    assert playground_main(["make-lmdb", "--digits", str(data), "--test-fraction", "0.2", "--no-progress"]) == 0
    opts = json.loads((DATA / "caffe2_shaped_opts.json").read_text())["opts"]
    opts["distributed"].update(num_gpus=0, num_cpus=1)
    opts["input"].update(train_input_path=str(data / "train"), test_input_path=str(data / "test"))
    resolved = resolve(("blob", opts))          # every original component is registered
    assert resolved.opts["model_param"]["bn_init_gamma"] == 1e-320


@pytest.mark.parametrize("path, closest", [("epoch_iter.num_epoch", "epoch_iter.num_epochs"),
                                           ("distributed.num_cpu", "distributed.num_cpus"),
                                           ("output.ckpt_keep_limt", "output.ckpt_keep_limit")])
def test_an_unknown_key_in_a_section_the_framework_owns_is_an_error_naming_the_closest(path, closest):
    opts = smoke()
    section, key = path.split(".")
    opts[section][key] = 1
    problems = problems_of(("blob", opts))
    assert any(p.startswith(f"opts.{path}: not a known key") and f"Did you mean {closest!r}?" in p for p in problems)


def test_a_key_only_an_unused_component_declares_is_an_error_that_names_that_component():
    opts = smoke()
    opts["distributed"]["master_port"] = 29400      # read by rendezvous_tcp; smoke uses another rendezvous
    problems = problems_of(("blob", opts))
    assert any(p.startswith("opts.distributed.master_port: not a known key") and "read by rendezvous_tcp" in p
               for p in problems)
    opts["model"]["rendezvous_py"] = "rendezvous_tcp"
    assert resolve(("blob", opts)).opts["distributed"]["master_port"] == 29400


def test_strict_makes_any_undeclared_key_an_error():
    opts = smoke()
    opts["model_param"]["wieght_decay"] = 1
    assert resolve(("blob", opts)).warnings
    with pytest.raises(OptsError, match="opts.model_param.wieght_decay: not a known key"):
        resolve_opts([("blob", opts)], check_devices=False, strict=True)


def test_keys_with_no_effect_are_optional_and_noted_once_when_given():
    opts = smoke()
    for section, key in (("model_param", "max_concurrent_distributed_ops"),
                         ("epoch_iter", "num_epochs_per_flow_schedule"), ("distributed", "first_cpu_id")):
        opts[section].pop(key, None)
    assert not [n for n in resolve(("blob", opts)).notes if "no effect" in n]
    opts["distributed"]["first_cpu_id"] = 0
    opts["epoch_iter"]["num_epochs_per_flow_schedule"] = 5
    notes = [n for n in resolve(("blob", opts)).notes if "no effect" in n]
    assert len(notes) == 1 and "distributed.first_cpu_id" in notes[0] and "num_epochs_per_flow_schedule" in notes[0]


@pytest.mark.parametrize("name", sorted(p.name for p in (DATA.parent.parent / "experiments").rglob("*.json")))
def test_every_experiment_still_validates(name):
    path = next((DATA.parent.parent / "experiments").rglob(name))
    opts = json.loads(path.read_text())["opts"]
    try:
        resolve(("blob", opts))
    except OptsError as err:   # the demo data may not be built here; every other problem is a regression
        assert all(p.endswith("does not exist") for p in err.problems), err.problems


@pytest.mark.parametrize("name", sorted(p.name for p in (DATA.parent.parent / "experiments").rglob("*.json")))
def test_no_experiment_of_the_project_writes_a_key_with_no_effect(name):
    # "accepted with no effect in PyTorch" is for a user who wrote a Caffe2 key; the project's own files,
    # which users copy, must not print it on every run
    opts = json.loads(next((DATA.parent.parent / "experiments").rglob(name)).read_text())["opts"]
    for path in (o.path for o in BUILTIN_OPTS if o.inert):
        section, key = path.split(".")
        assert key not in opts.get(section, {}), f"{name} writes {path}"


def test_defaults_file_values_mean_what_they_mean_in_json_and_bare_keys_may_name_component_keys(tmp_path):
    from playground.launch.prepare import known_paths
    path = tmp_path / "defaults.ini"
    path.write_text("[Global_Params]\npretrained_model = null\ncolor_jitter = true\nbase_learning_rate = 1e-3\n"
                    "cnn_channels = [8, 16]\nsynthetic_train_size = 300\n")
    layer = load_defaults_file(str(path), SECTIONS, known_paths)
    assert layer == {"model_param": {"pretrained_model": None, "base_learning_rate": 0.001, "cnn_channels": [8, 16]},
                     "input": {"color_jitter": True, "synthetic_train_size": 300}}


def test_an_optimizer_brings_its_own_default_learning_rate_or_the_opts_must_give_one(tmp_path, monkeypatch):
    opts = smoke()
    del opts["model_param"]["base_learning_rate"]
    opts["model"]["optimizer_py"] = "adamw_optimizer"
    assert resolve(("blob", opts)).opts["model_param"]["base_learning_rate"] == 1e-3
    (tmp_path / "my_adam.py").write_text("def gen_optimizer_fun(self, model, dataset, is_train):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    opts["model"]["optimizer_py"] = "my_adam"
    assert any(p.startswith("opts.model_param.base_learning_rate: missing; the optimizer my_adam declares no default")
               for p in problems_of(("blob", opts)))
    opts["model_param"]["base_learning_rate"] = 3e-4
    assert resolve(("blob", opts)).opts["model_param"]["base_learning_rate"] == 3e-4


def test_items_of_list_typed_component_opts_are_checked_by_their_declared_type():
    opts = smoke()
    opts["model_param"]["cnn_channels"] = ["8x", 16]
    assert any(p.startswith("opts.model_param.cnn_channels[0]: expected a positive integer, got") and '"8x"' in p
               for p in problems_of(("blob", opts)))
    opts["model"].update(forward_pass_py="mlp_forward", optimizer_py="adamw_optimizer")
    opts["model_param"].update(mlp_hidden=[32, 0], adam_betas=[0.9])
    problems = problems_of(("blob", opts))
    assert any(p.startswith("opts.model_param.mlp_hidden[1]: expected a positive integer") for p in problems)
    assert any(p.startswith("opts.model_param.adam_betas: expected a list of 2 items") for p in problems)


def test_a_full_pass_epoch_smaller_than_the_global_batch_is_refused_when_the_input_knows_its_size():
    opts = smoke()
    opts["epoch_iter"].update(num_train_sample_per_epoch=0, batch_per_device=64)
    opts["input"]["synthetic_train_size"] = 50
    assert any(p.startswith("opts.epoch_iter.batch_per_device: the global batch (64 = batch_per_device x 1 devices")
               and "training set (50 samples, from synthetic_input)" in p for p in problems_of(("blob", opts)))
    opts["input"]["synthetic_train_size"] = 64
    resolve(("blob", opts))


def test_several_shards_meeting_through_the_environment_need_master_addr_before_launch(monkeypatch):
    opts = smoke()
    opts["model"]["rendezvous_py"] = "rendezvous_env"
    opts["distributed"]["num_shards"] = 2
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    monkeypatch.setenv("MASTER_PORT", "29500")
    assert any(p.startswith("opts.model.rendezvous_py: rendezvous_env with distributed.num_shards 2 needs "
                            "MASTER_ADDR in the environment") for p in problems_of(("blob", opts)))
    monkeypatch.setenv("MASTER_ADDR", "node01")
    resolve(("blob", opts))


def _regression(**output) -> dict:
    opts = load_experiment("first_model/diabetes_mlp.json")
    opts["output"].update(output)
    return opts


def test_each_metric_says_its_mode_else_its_meter_else_its_name():
    metrics = [
        {"name": "test_mse", "meter_py": "experiments.first_model.meters.MeanSquaredError", "is_train": False},
        {"name": "test_r2", "meter_py": "experiments.first_model.meters.R2Score", "is_train": False},
        {"name": "test_score", "meter_py": "experiments.first_model.meters.MeanSquaredError", "is_train": False},
        {"name": "test_fit", "meter_py": "ComputeLoss", "is_train": False},
        {"name": "test_error_rate", "meter_py": "ComputeLoss", "is_train": False, "mode": "max"},
        {"name": "test_loss", "meter_py": "ComputeLoss", "is_train": False},
    ]
    resolved = resolve(("blob", _regression(metrics=metrics, plots=[], ckpt_save_best_metric="test_score"))).opts
    modes = {m["name"]: m["mode"] for m in resolved["output"]["metrics"]}
    # the meter's higher_is_better wins over the name (test_score; ComputeLoss's lower is better: test_fit), the
    # entry's mode over both
    assert modes == {"test_mse": "min", "test_r2": "max", "test_score": "min", "test_fit": "min",
                     "test_error_rate": "max", "test_loss": "min"}
    from playground.checkpoints.policy import best_metric_of
    assert best_metric_of(resolved["output"]) == ("test_score", "min")


def test_a_bad_metric_mode_names_the_entry():
    metrics = [{"name": "test_mse", "meter_py": "ComputeLoss", "is_train": False, "mode": "lowest"}]
    problems = problems_of(("blob", _regression(metrics=metrics, plots=[], ckpt_save_best_metric="")))
    assert any(p.startswith("opts.output.metrics[0].mode: expected one of 'min', 'max'") for p in problems), problems


def test_a_null_num_classes_suits_a_forward_pass_that_is_not_a_classifier():
    assert resolve(("blob", _regression())).opts["input"]["num_classes"] is None


def test_a_null_num_classes_for_a_classifier_whose_input_cannot_count_classes_is_an_error_before_the_run():
    opts = load_experiment("digits_mlp.json")
    opts["input"]["num_classes"] = None
    problems = problems_of(("blob", opts))
    assert problems == ["opts.input.num_classes: null, but mlp_forward builds a classifier with input.num_classes "
                        "outputs and the input digits_arrays does not say how many classes there are; set "
                        "input.num_classes (1 for one output)"]


def test_a_wrong_field_of_a_record_shows_that_field_s_value_not_the_whole_record():
    problems = problems_of(("blob", _regression()), ("--set", {"output": {"early_stopping": {"patience": -1}}}))
    assert problems == ["opts.output.early_stopping.patience: expected a non-negative integer, got -1 (from --set)"]
