"""Fixtures for the trainer tests: importable user modules outside the repository."""
from __future__ import annotations

import sys
import textwrap

import pytest

# A user hook with state, written as a user would: it counts the optimizer steps and the micro-batch samples it
# saw, declares its own opts key, and adds its count to every record point.
STEP_COUNTER = '''
    """Counts optimizer steps; the count is checkpointed and written into every record point."""
    from playground.trainer import Hook

    additional_definitions = [{"name": "model_param.step_counter_start", "type": int, "default": 0,
                               "help": "The count the step counter starts from."}]

    class StepCounter(Hook):
        def __init__(self, trainer):
            super().__init__(trainer)
            self.steps = trainer.opts["model_param"]["step_counter_start"]

        def after_step(self):
            self.steps += 1

        def after_record(self, record):
            record["steps_seen"] = self.steps

        def state_dict(self):
            return {"steps": self.steps}

        def load_state_dict(self, state):
            self.steps = state["steps"]
'''

STAGE_LOG = '''
    """Logs the stages it sees into CALLS (no state), beside an override that logs the Caffe2 methods."""
    from playground.trainer import Hook

    CALLS = []

    class StageLog(Hook):
        name = "stage_log"

        def before_epoch(self, epoch):
            CALLS.append("hook.before_epoch")

        def before_iter(self, epoch, epoch_iter):
            CALLS.append("hook.before_iter")

        def after_iter(self, epoch, epoch_iter):
            CALLS.append("hook.after_iter")

        def end_of_iter(self, epoch, epoch_iter):
            CALLS.append("hook.end_of_iter")

        def after_epoch(self, epoch):
            CALLS.append("hook.after_epoch")
'''


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
