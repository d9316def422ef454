"""Fixtures for the trainer tests: importable user modules outside the repository."""
from __future__ import annotations

from tests.conftest import REPO
from tests.playground.trainer.test_anyexp import user_modules  # noqa: F401 - the fixture: modules outside the repository


def doc_example(marker: str) -> str:
    """The code block after `<!-- example: NAME -->` in docs/hooks.md: the tests run what the docs show."""
    text = (REPO / "docs" / "hooks.md").read_text()
    after = text.split(f"<!-- example: {marker} -->", 1)[1]
    return after.split("```python\n", 1)[1].split("```", 1)[0]


# The user hook with state of docs/hooks.md: counts optimizer steps from its own opts key, adds the count to
# every record point, and checkpoints it.
STEP_COUNTER = doc_example("step_counter.py")

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
