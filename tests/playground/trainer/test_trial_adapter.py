"""Trial classes (model.trial_py) in the AnyExp loop: the data forms on 2 CPU ranks with evaluate_batch metrics
equal to one rank's, hooks and loss from the class, and opts that need no input or forward-pass component."""
from __future__ import annotations

import json
import os

import pytest

from playground.api import run
from playground.options.loader import resolve_opts
from playground.options.layers import OptsError
from tests.conftest import REPO, load_experiment, run_cli
from tests.playground.trainer.test_anyexp import user_modules  # noqa: F401 - the fixture: modules outside the repository

# The digits trial with lr 0 (so one and two ranks evaluate the same network) and its data in a chosen form.
FORMS_TRIAL = '''
import torch
from torch.utils.data import DataLoader, Dataset
from experiments.digits_trial.digits_trial import DigitsTrial

additional_definitions = [{"name": "model_param.data_form", "type": str, "default": "numpy", "help": "form"}]


class Rows(Dataset):
    def __init__(self, x, y):
        self.x, self.y = torch.from_numpy(x), torch.from_numpy(y)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


class FormsTrial(DigitsTrial):
    def build_optimizer(self, model):
        return torch.optim.SGD(model.parameters(), lr=0.0)

    def _form(self, x, y):
        form = self.context.get_hparam("data_form")
        return (x, y) if form == "numpy" else Rows(x, y) if form == "dataset" else DataLoader(Rows(x, y), batch_size=32)

    def build_training_data_loader(self):
        return self._form(self.x_train, self.y_train)

    def build_validation_data_loader(self):
        return self._form(self.x_test, self.y_test)

    def evaluate_batch(self, batch):
        data, labels = batch
        correct = (self.model(data).argmax(dim=1) == labels).sum()
        return {"accuracy": (correct, len(labels)), "label_mean": (labels.sum(), len(labels))}
'''


def trial_opts(trial: str, **epoch_iter) -> dict:
    opts = load_experiment("digits_trial.json")
    opts["model"]["trial_py"] = trial
    opts["epoch_iter"].update(num_epochs=1, num_train_sample_per_epoch=128, **epoch_iter)
    opts["output"].update(progress="none", plots=[])
    return opts


def metric_lines(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow   # three runs, two of them of two spawned ranks
def test_two_ranks_train_a_trial_with_each_data_form_and_evaluate_as_one_rank_does(tmp_path, user_modules):
    module = user_modules("forms_trial", FORMS_TRIAL)
    opts = trial_opts(f"{module}.FormsTrial", test_batch_per_device=32)
    opts["output"].update(ckpt_save_best_metric="test_accuracy", metrics=[
        {"name": "test_accuracy", "meter_py": "ComputeMean", "meter_kargs": {"blob_name": "accuracy"}, "is_train": False},
        {"name": "test_label_mean", "meter_py": "ComputeMean", "meter_kargs": {"blob_name": "label_mean"},
         "is_train": False}])
    run(opts, run_dir=str(tmp_path / "one"))        # numpy arrays, the default form
    one = metric_lines(tmp_path / "one")[-1]
    # numpy arrays become a map-style dataset (forms.ArrayDataset) before any sharding, so two ranks of the numpy
    # form would take the path of the dataset form again: the one-rank run above covers the arrays
    for form in ("dataset", "loader"):
        run(opts, run_dir=str(tmp_path / form),
            sets=["distributed.num_cpus=2", "epoch_iter.batch_per_device=16", f"model_param.data_form={form}"])
        two = metric_lines(tmp_path / form)[-1]
        assert (two["test_accuracy"], two["test_label_mean"]) == (one["test_accuracy"], one["test_label_mean"]), form
    # the 359 test digits, each counted once: the label mean is exact
    from components.inputs.digits_arrays import load_digits_split
    labels = load_digits_split(0.2)[3]
    assert one["test_label_mean"] == labels.sum() / len(labels)


HOOKED_TRIAL = '''
import torch
from torch import nn
from playground.trainer import Hook
from experiments.digits_trial.digits_trial import DigitsTrial


class Steps(Hook):
    def __init__(self, trainer=None):
        super().__init__(trainer)
        self.steps = 0

    def after_step(self):
        self.steps += 1

    def after_record(self, record):
        record["steps"] = self.steps

    def state_dict(self):
        return {"steps": self.steps}

    def load_state_dict(self, state):
        self.steps = state["steps"]


class UsualStepTrial(DigitsTrial):
    """No train_batch or evaluate_batch: the usual forward and its build_loss; the optimizer from the opts."""
    build_optimizer = None
    train_batch = None
    evaluate_batch = None

    def build_loss(self):
        return nn.CrossEntropyLoss(label_smoothing=0.1)

    def build_hooks(self):
        return [Steps()]
'''


def test_a_trial_without_steps_uses_the_usual_forward_its_loss_its_hooks_and_the_opts_optimizer(tmp_path, user_modules):
    module = user_modules("hooked_trial", HOOKED_TRIAL)
    opts = trial_opts(f"{module}.UsualStepTrial")
    opts["model"]["optimizer_py"] = "sgd_optimizer"
    opts["output"].update(ckpt_save_best_metric="test_top1", metrics=[
        {"name": "train_loss", "meter_py": "ComputeLoss", "meter_kargs": {"blob_name": "loss"}, "is_train": True},
        {"name": "test_top1", "meter_py": "ComputeTopKAccuracy", "meter_kargs": {"topk": 1}, "is_train": False}])
    run(opts, run_dir=str(tmp_path / "run"))
    record = metric_lines(tmp_path / "run")[-1]
    assert record["steps"] == 4 and 0 < record["test_top1"] <= 1 and record["lr"] == 0.05
    assert record["train_loss"] > 0.1   # label smoothing keeps the loss well above 0


def test_trial_opts_need_no_input_or_forward_pass_but_one_of_the_two_must_be_given():
    trial = load_experiment("digits_trial.json")
    assert resolve_opts([("opts", trial)]).opts["model"]["trial_py"].endswith("DigitsTrial")
    trial["model"]["trial_py"] = ""
    with pytest.raises(OptsError) as err:
        resolve_opts([("opts", trial)])
    assert "opts.input.input_name_py: missing" in str(err.value) and "model.trial_py" in str(err.value)
    assert "opts.model.forward_pass_py: missing" in str(err.value)


def test_a_trial_without_build_optimizer_needs_an_update_rule_in_the_opts(user_modules):
    module = user_modules("no_optimizer_trial", HOOKED_TRIAL)
    opts = trial_opts(f"{module}.UsualStepTrial")
    with pytest.raises(OptsError, match="or the trial class defines build_optimizer"):
        resolve_opts([("opts", opts)])


def test_a_trial_name_that_is_no_trial_class_is_refused_naming_what_it_lacks(user_modules):
    module = user_modules("not_a_trial", "class NotATrial:\n    def build_model(self):\n        pass\n")
    opts = trial_opts(f"{module}.NotATrial")
    with pytest.raises(OptsError, match="build_training_data_loader"):
        resolve_opts([("opts", opts)])


STREAM_TRIAL = '''
import torch
from torch.utils.data import IterableDataset
from experiments.digits_trial.digits_trial import DigitsTrial


class Rows(IterableDataset):
    def __init__(self, x, y):
        self.x, self.y = torch.from_numpy(x), torch.from_numpy(y)

    def __iter__(self):
        return iter(zip(self.x, self.y))


class StreamTrial(DigitsTrial):
    def build_training_data_loader(self):
        return Rows(self.x_train, self.y_train)
'''


def test_a_trial_whose_iterable_training_data_has_no_length_is_refused_before_launch(tmp_path, opts_file):
    (tmp_path / "stream_trial.py").write_text(STREAM_TRIAL)
    opts = trial_opts("stream_trial.StreamTrial")
    opts["epoch_iter"]["num_train_sample_per_epoch"] = 0     # one full pass: the data must say how long it is
    env = {"PYTHONPATH": f"{tmp_path}{os.pathsep}{REPO}"}
    for extra in (["--dry-run"], []):
        proc = run_cli("--parameters-file", opts_file(opts), "--run-dir", str(tmp_path / "run"), *extra, env=env)
        assert proc.returncode == 2, proc.stderr
        assert ("trial stream_trial.StreamTrial: build_training_data_loader(): the training data is an iterable "
                "dataset without a length; set opts.epoch_iter.num_train_sample_per_epoch") in proc.stderr
        assert "Traceback" not in proc.stderr and not (tmp_path / "run" / "metrics.jsonl").exists()
