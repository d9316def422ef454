"""User hooks in model.hooks_py beside built-in hooks and override modules, and their state across a resume
(playground/trainer/hook_list.py, hook.py; the hook kind of playground/options/registry.py)."""
from __future__ import annotations

import gc
import json
import sys
from dataclasses import dataclass

import pytest
import torch

from playground.api import run
from playground.options.layers import OptsError
from playground.trainer.hook import Hook
from tests.conftest import tiny_opts
from tests.playground.trainer.conftest import STAGE_LOG, STEP_COUNTER


def records(run_dir) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]


def test_two_user_hooks_from_outside_the_repository_and_an_override_work_together(tmp_path, user_modules):
    counter = user_modules("step_counter", STEP_COUNTER)
    stages = user_modules("stage_log", STAGE_LOG)
    override = user_modules("override_log", '''
        import stage_log
        def fun_per_epoch_b4RunNet(self, epoch):
            stage_log.CALLS.append("fun_per_epoch_b4RunNet")
        def fun_per_iter_b4RunNet(self, epoch, epoch_iter):
            stage_log.CALLS.append("fun_per_iter_b4RunNet")
        def fun_per_iter_aftRunNetAftTest(self, epoch, epoch_iter):
            stage_log.CALLS.append("fun_per_iter_aftRunNetAftTest")
        def fun_per_epoch_aftRunNet(self, epoch):
            stage_log.CALLS.append("fun_per_epoch_aftRunNet")
    ''')
    opts = tiny_opts(model={"hooks_py": [counter, stages], "additional_override_py": override},
                     model_param={"step_counter_start": 100}, epoch_iter={"num_epochs": 1})
    run(opts, run_dir=str(tmp_path / "run"))
    iteration = ["hook.before_iter", "fun_per_iter_b4RunNet", "hook.after_iter", "fun_per_iter_aftRunNetAftTest",
                 "hook.end_of_iter"]
    assert sys.modules[stages].CALLS == (["hook.before_epoch", "fun_per_epoch_b4RunNet"] + iteration * 4
                                         + ["hook.after_epoch", "fun_per_epoch_aftRunNet"])
    # 4 iterations: a record point every 2 and the end-of-epoch test pass, counting from its own opts key
    assert [r["steps_seen"] for r in records(tmp_path / "run")] == [102, 104, 104]


def test_a_user_hooks_state_survives_a_resume_and_matches_an_uninterrupted_run(tmp_path, user_modules):
    counter = user_modules("step_counter", STEP_COUNTER)
    opts = tiny_opts(model={"hooks_py": [counter]})
    whole = run(opts, run_dir=str(tmp_path / "whole"))
    first = tiny_opts(model={"hooks_py": [counter]}, epoch_iter={"num_epochs": 1})
    run(first, run_dir=str(tmp_path / "resumed"))
    resumed = run(opts, run_dir=str(tmp_path / "resumed"))
    assert "resumed from" in (tmp_path / "resumed" / "train.log").read_text()
    assert [r["steps_seen"] for r in records(tmp_path / "resumed")] == [2, 4, 4, 6, 8, 8]
    assert [r["steps_seen"] for r in records(tmp_path / "whole")] == [2, 4, 4, 6, 8, 8]
    a = torch.load(resumed["model"], weights_only=True)
    b = torch.load(whole["model"], weights_only=True)
    assert a["hooks"]["step_counter"] == b["hooks"]["step_counter"] == {"steps": 8}
    assert all(torch.equal(a["model"][k], b["model"][k]) for k in a["model"])


def test_resuming_with_a_hook_added_or_removed_names_it_and_the_new_hook_starts_fresh(tmp_path, user_modules):
    counter = user_modules("step_counter", STEP_COUNTER)
    run(tiny_opts(model={"hooks_py": [counter]}, epoch_iter={"num_epochs": 1}), run_dir=str(tmp_path / "run"))
    run(tiny_opts(model_param={"ema_decay": 0.9}), run_dir=str(tmp_path / "run"))
    log = (tmp_path / "run" / "train.log").read_text()
    assert "the checkpoint holds hook step_counter, which this run does not have" in log
    assert "hook ema is not in the checkpoint (added since it was saved): it starts fresh" in log
    state = torch.load(tmp_path / "run" / "checkpoints" / "last", weights_only=True)
    assert "step_counter" not in state["hooks"] and state["hooks"]["ema"]["updates"] == 4


def test_a_module_without_a_hook_class_in_hooks_py_is_refused_before_training(tmp_path, user_modules):
    not_a_hook = user_modules("not_a_hook", "def helper():\n    pass\n")
    with pytest.raises(OptsError) as err:
        run(tiny_opts(model={"hooks_py": [not_a_hook]}), run_dir=str(tmp_path / "run"))
    assert "opts.model.hooks_py[0]" in str(err.value) and "subclass of playground.trainer.Hook" in str(err.value)
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


def test_a_hook_listed_twice_is_refused_before_training(tmp_path, user_modules):
    counter = user_modules("step_counter", STEP_COUNTER)
    with pytest.raises(OptsError, match=r"opts.model.hooks_py\[1\]: 'step_counter' is listed twice"):
        run(tiny_opts(model={"hooks_py": [counter, counter]}), run_dir=str(tmp_path / "run"))
    assert not (tmp_path / "run" / "metrics.jsonl").exists()


KEPT_HOOK = '''
    """Reads its opts through self.trainer, and keeps itself in KEPT after the run (as a user's list might)."""
    from playground.trainer import Hook

    KEPT = []

    class Kept(Hook):
        name = "kept"

        def before_train(self):
            self.lr_seen = self.trainer.opts["model_param"]["base_learning_rate"]
            KEPT.append(self)
'''


def test_a_hook_reads_the_trainer_during_the_run_and_does_not_keep_it_alive_after(tmp_path, user_modules):
    kept = user_modules("kept_hook", KEPT_HOOK)
    run(tiny_opts(model={"hooks_py": [kept]}, epoch_iter={"num_epochs": 1}), run_dir=str(tmp_path / "run"))
    hook, = sys.modules[kept].KEPT
    assert hook.lr_seen == 0.05
    gc.collect()
    with pytest.raises(ReferenceError):
        hook.trainer.opts


def test_each_stage_calls_every_hook_that_has_it_in_list_order_and_skips_none():
    """The hook list finds the hooks that have a stage once (hook_list.py); a stage a hook inherits from another
    user class, or a function set on the instance, counts as having it."""
    from playground.trainer.hook import Hook
    from playground.trainer.hook_list import HookList
    calls = []

    class Counting(Hook):
        def after_iter(self, epoch, epoch_iter):
            calls.append((self.name, "after_iter", epoch, epoch_iter))

    class Inherits(Counting):        # after_iter from its user base class
        def before_iter(self, epoch, epoch_iter):
            calls.append((self.name, "before_iter", epoch, epoch_iter))

    class Bare(Hook):
        pass

    a, b, c, d = Counting(None), Inherits(None), Bare(None), Bare(None)
    for hook, name in ((a, "a"), (b, "b"), (c, "c"), (d, "d")):
        hook.name = name
    d.after_iter = lambda epoch, epoch_iter: calls.append(("d", "after_iter", epoch, epoch_iter))
    hooks = HookList([a, b, c, d])
    for i in range(2):
        hooks.call("before_iter", 0, i)
        hooks.call("after_iter", 0, i)
        hooks.call("end_of_iter", 0, i)
    assert calls == [("b", "before_iter", 0, 0), ("a", "after_iter", 0, 0), ("b", "after_iter", 0, 0),
                     ("d", "after_iter", 0, 0),
                     ("b", "before_iter", 0, 1), ("a", "after_iter", 0, 1), ("b", "after_iter", 0, 1),
                     ("d", "after_iter", 0, 1)]



SEEN: list[dict] = []      # what BringAHook saw, in this process (one rank, not spawned)


class Held(Hook):
    """A hook holding what only its job has (as a Determined trial's controller holds the trial's session)."""
    name = "held"

    def __init__(self, trainer, held):
        super().__init__(trainer)
        self.held, self.steps = held, 0

    def after_iter(self, epoch, epoch_iter):
        self.steps += 1

    def state_dict(self):
        return {"steps": self.steps}


@dataclass(frozen=True)
class BringAHook:
    """A job that gives the trainer such a hook, then trains."""
    held: str

    def run(self, trainer):
        trainer.add_hook(Held(trainer, self.held))
        before = trainer.hooks.get("held").held
        result = trainer.buildModelAndTrain(trainer.opts)
        SEEN.append({"before": before, "names": [h.name for h in trainer.hooks],
                     "steps": trainer.hooks.get("held").steps, "model": result["model"]})
        return result


def test_a_hook_the_job_brings_is_found_by_name_before_the_loop_runs_after_the_user_hooks_and_is_checkpointed(
        tmp_path, user_modules):
    from playground.launch.prepare import prepare
    from playground.launch.spawn import launch
    counter = user_modules("step_counter", STEP_COUNTER)
    prepared = prepare([("test opts", tiny_opts(model={"hooks_py": [counter]}, epoch_iter={"num_epochs": 1}))],
                       run_dir=str(tmp_path / "run"))
    SEEN.clear()
    assert launch(prepared, BringAHook("the job's session")) == 0
    seen, = SEEN
    assert seen["before"] == "the job's session"
    names = seen["names"]
    assert names.index("step_counter") < names.index("held") < names.index("progress")
    assert seen["steps"] == 4
    assert torch.load(seen["model"], weights_only=True)["hooks"]["held"] == {"steps": 4}
