"""The AnyExp loop: hook order, overrides, per-run classes, record points, outputs (playground/trainer/anyexp.py)."""
from __future__ import annotations

import json
import sys
import textwrap

import pytest
import torch

from playground.trainer.anyexp import AnyExp
from playground.api import run
from tests.conftest import tiny_opts

HOOKS = ["get_model_input_fun", "init_model", "planning_output", "prep_data_parallel_models", "loadCheckpoint",
         "fun_per_epoch_b4RunNet", "fun_per_iter_b4RunNet", "run_training_net", "fun_per_iter_aftRunNetB4Test",
         "run_testing_net", "fun_per_iter_aftRunNetAftTest", "checkpoint", "fun_per_epoch_aftRunNet",
         "fun_conclude_operator", "createMetricsPlotsModelsOutputs", "assembleAllOutputs"]


@pytest.fixture
def user_modules(tmp_path, monkeypatch):
    """Write modules into an importable folder outside the repository."""
    folder = tmp_path / "usercode"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))

    def write(name: str, code: str) -> str:
        (folder / f"{name}.py").write_text(textwrap.dedent(code))
        sys.modules.pop(name, None)
        return name
    return write


def test_hooks_run_in_the_original_order(tmp_path, user_modules):
    wrappers = "\n".join(
        f"def {h}(self, *args):\n    CALLS.append('{h}')\n    return super(type(self), self).{h}(*args)\n" for h in HOOKS)
    module = user_modules("record_hooks", "CALLS = []\n" + wrappers)
    opts = tiny_opts(model={"additional_override_py": module},
                     epoch_iter={"num_epochs": 1, "num_train_sample_per_epoch": 64, "batch_per_device": 16,
                                 "num_train_iteration_per_test": 2, "num_test_iter": 1,
                                 "num_test_sample": 32, "test_batch_per_device": 16})
    run(opts, run_dir=str(tmp_path / "run"))
    calls = sys.modules[module].CALLS
    iteration = ["fun_per_iter_b4RunNet", "run_training_net", "fun_per_iter_aftRunNetB4Test"]
    record = ["run_testing_net"]  # num_test_iter = 1
    expected = (HOOKS[:6]
                + iteration + ["fun_per_iter_aftRunNetAftTest"]
                + iteration + record + ["fun_per_iter_aftRunNetAftTest"]
                + iteration + ["fun_per_iter_aftRunNetAftTest"]
                + iteration + record + ["fun_per_iter_aftRunNetAftTest"]
                + ["run_testing_net"] * 2            # end-of-epoch pass: 32 samples / 16
                + ["checkpoint", "fun_per_epoch_aftRunNet", "fun_conclude_operator",
                   "createMetricsPlotsModelsOutputs", "assembleAllOutputs"])
    assert calls == expected


def test_an_override_of_list_of_epochs_stops_early_and_leaves_later_runs_alone(tmp_path, user_modules):
    module = user_modules("stop_when_good", '''
        def list_of_epochs(self):
            epoch = self.epoch
            while epoch < self.opts["epoch_iter"]["num_epochs"]:
                accuracy = self.metrics["test_accuracy_top1"]["output"]
                if accuracy and accuracy[-1] is not None and accuracy[-1] >= 0.5:
                    return
                yield epoch
                epoch += 1
    ''')
    before = dict(vars(AnyExp))
    opts = tiny_opts(model={"additional_override_py": module},
                     epoch_iter={"num_epochs": 30}, model_param={"base_learning_rate": 0.1})
    stopped = run(opts, run_dir=str(tmp_path / "stopped"))
    epochs_run = len([e for e in stopped["metrics"]["epochs"] if float(e).is_integer()])
    assert 1 <= epochs_run < 30 and stopped["metrics"]["test_accuracy_top1"][-1] >= 0.5
    assert dict(vars(AnyExp)) == before     # the shared base class was never patched

    plain = run(tiny_opts(epoch_iter={"num_epochs": 3}), run_dir=str(tmp_path / "plain"))
    assert plain["metrics"]["epochs"][-1] == 3.0


def test_the_original_no_test_no_checkpoint_override(tmp_path):
    opts = tiny_opts(model={"additional_override_py": "override_no_test_model_no_checkpoint"})
    result = run(opts, run_dir=str(tmp_path / "run"))
    assert result["model"] is None
    assert not (tmp_path / "run" / "checkpoints").exists()
    assert all(v is None for v in result["metrics"]["test_loss"])
    assert all(v is not None for v in result["metrics"]["train_loss"])
    again = run(tiny_opts(), run_dir=str(tmp_path / "again"))
    assert again["model"].endswith("model_checkpoint_epoch2.pt")
    assert any(v is not None for v in again["metrics"]["test_loss"])


def test_a_component_in_a_users_own_file_trains_by_dotted_path(tmp_path, user_modules):
    user_modules("my_tiny_net", '''
        """A user's network outside the repository."""
        from torch import nn
        def gen_forward_pass_builder_fun(self, model, dataset, is_train):
            net = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, self.opts["input"]["num_classes"]))
            return net, nn.CrossEntropyLoss()
    ''')
    result = run(tiny_opts(model={"forward_pass_py": "my_tiny_net"}), run_dir=str(tmp_path / "run"))
    state = torch.load(result["model"], weights_only=True)["model"]
    assert set(state) == {"1.weight", "1.bias"}


def test_record_points_measure_every_sample_since_the_last_point(tmp_path, user_modules):
    user_modules("sample_counter", '''
        """Counts the samples added since the last record point."""
        from playground.trainer.meters import Meter
        class CountSamples(Meter):
            def Add(self, blobs):
                self.total = self.total + len(blobs["label"])
                self.count = 1
    ''')
    opts = tiny_opts(epoch_iter={"num_epochs": 1, "num_train_sample_per_epoch": 96, "batch_per_device": 16,
                                 "num_train_iteration_per_test": 4, "num_test_iter": 2, "num_test_sample": 0})
    opts["output"]["metrics"] = [
        {"name": "train_seen", "meter_py": "sample_counter.CountSamples", "is_train": True},
        {"name": "test_seen", "meter_py": "sample_counter.CountSamples", "is_train": False}]
    opts["output"]["plots"] = []
    metrics = run(opts, run_dir=str(tmp_path / "run"))["metrics"]
    # 6 iterations: a point after 4 (4 x 16 train samples, 2 x 16 test), then the end of the epoch with the
    # 2 remaining iterations and the whole test set (40 samples).
    assert metrics["epochs"] == [4 / 6, 1.0]
    assert metrics["train_seen"] == [64.0, 32.0]
    assert metrics["test_seen"] == [32.0, 40.0]
    assert metrics["samples_per_sec"][0] > 0 and metrics["secs_per_train"][1] > 0


def test_zero_samples_per_epoch_means_one_pass(tmp_path):
    opts = tiny_opts(epoch_iter={"num_train_sample_per_epoch": 0, "num_epochs": 1, "batch_per_device": 16,
                                 "num_train_iteration_per_test": 100})
    metrics = run(opts, run_dir=str(tmp_path / "run"))["metrics"]
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert records[-1]["iteration"] == 128 // 16 and metrics["epochs"] == [1.0]


def test_run_folder_holds_opts_log_metrics_results_plots_and_checkpoints(tmp_path):
    result = run(tiny_opts(), run_dir=str(tmp_path / "run"))
    folder = tmp_path / "run"
    for name in ("opts.json", "train.log", "metrics.jsonl", "results.json"):
        assert (folder / name).is_file(), name
    pngs = sorted(folder.glob("*.png"))
    assert [p.name for p in pngs] == ["plot0_train_and_test_loss.png", "plot1_accuracy.png"]
    for png in pngs:
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
        import matplotlib.image
        assert matplotlib.image.imread(str(png)).shape[:2] == (500, 800)
    results = json.loads((folder / "results.json").read_text())
    lines = (folder / "metrics.jsonl").read_text().splitlines()
    assert results["records"] == len(lines) == len(results["metrics"]["epochs"])
    assert all(len(v) == len(lines) for v in results["metrics"].values())
    full_passes = [json.loads(line) for line in lines if json.loads(line)["kind"] == "epoch"]
    assert results["best"]["test_accuracy_top1"]["value"] == max(r["test_accuracy_top1"] for r in full_passes)
    assert (folder / "checkpoints" / "model_checkpoint_epoch1.pt").is_file()
    assert result["model"] == str(folder / "checkpoints" / "model_checkpoint_epoch2.pt")
    assert "epoch 2.00 (end of epoch)" in (folder / "train.log").read_text()


def test_opts_input_datasets_describes_what_the_input_component_returned(tmp_path, monkeypatch):
    import json as _json

    from playground.api import run as run_opts
    from tests.conftest import tiny_opts as _tiny
    (tmp_path / "record_datasets.py").write_text(
        "import json, os\n"
        "def fun_per_epoch_b4RunNet(self, epoch):\n"
        "    with open(os.path.join(self.run_dir, 'datasets.json'), 'w') as f:\n"
        "        json.dump(self.opts['input']['datasets'], f)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    opts = _tiny(model={"additional_override_py": "record_datasets"}, epoch_iter={"num_epochs": 1})
    run_opts(opts, run_dir=str(tmp_path / "run"))
    described = _json.loads((tmp_path / "run" / "datasets.json").read_text())
    assert [(d["split"], d["size"]) for d in described] == [("train", 128), ("test", 40)]
    assert described[0]["type"] == "components.inputs.synthetic_input.SyntheticDataset"


def test_every_record_counts_the_training_samples_seen_so_far(tmp_path):
    run(tiny_opts(), run_dir=str(tmp_path / "run"))
    records = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [r["samples"] for r in records] == [r["iteration"] * 16 for r in records]
    assert [r["samples"] for r in records] == sorted(r["samples"] for r in records) and records[-1]["samples"] == 128
