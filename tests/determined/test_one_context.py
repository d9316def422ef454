"""The Determined context has one owner (issue 37 item 3): PyTorchTrialContext's state is its own (no other
module reads or sets its private attributes), and the trial's session is held by the `determined` hook alone (no
trainer attribute carries it). Read from the source, so a new reach fails here by file and line."""
from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PLAYGROUND = REPO / "playground"
CONTEXT = PLAYGROUND / "determined" / "trials" / "context.py"


def _attributes(path: Path):
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Attribute):
            yield node


def _private_state_of_the_context() -> set[str]:
    tree = ast.parse(CONTEXT.read_text())
    context = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "PyTorchTrialContext")
    return {n.attr for n in ast.walk(context) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
            and n.value.id == "self" and n.attr.startswith("_") and not n.attr.startswith("__")}


def test_no_module_but_the_context_reads_or_sets_its_private_attributes():
    private = _private_state_of_the_context()
    assert {"_epoch_len", "_hparams", "_exp_conf"} <= private      # the scan reads the class it means
    reaches = [f"{path.relative_to(REPO)}:{node.lineno} .{node.attr}"
               for path in sorted(PLAYGROUND.rglob("*.py")) if path != CONTEXT
               for node in _attributes(path)
               if node.attr in private and not (isinstance(node.value, ast.Name) and node.value.id == "self")]
    assert reaches == []


def test_the_trials_session_hangs_on_no_trainer_attribute():
    """The session reaches the `determined` hook (loop_hook.py), which the job gives the trainer; loop.py reads it
    through that hook. `trainer.det` (the session hung on the trainer) is gone."""
    reaches = [f"{path.relative_to(REPO)}:{node.lineno}" for path in sorted(PLAYGROUND.rglob("*.py"))
               for node in _attributes(path) if node.attr == "det"]
    assert reaches == []
