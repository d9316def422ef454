"""The run folder's layout (playground/outputs/run_folder.py): a run writes its files where RunFolder names them,
nothing else in playground/ joins one of those names to a folder, and the layout imports without torch (the
sweep layer and `playground ui` read run folders through it)."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys

from playground.api import run
from playground.outputs.run_folder import RunFolder
from tests.conftest import REPO, tiny_opts

# The names RunFolder gives, and the one folder every run has; joined to a folder only in run_folder.py.
NAMES = {value for key, value in vars(RunFolder).items() if key.isupper() and isinstance(value, str)} | \
    {"checkpoints", "attempts.jsonl"}
OWNERS = {"playground/outputs/run_folder.py", "playground/restarts/attempts.py"}   # attempts.jsonl is restarts'
# The same name for another folder's file: the sweep folder's own lock in its control/ folder.
OTHER_FOLDERS = {("playground/sweeps/agents/runner.py", "run.lock")}


def joined_names(path) -> set[str]:
    """The literal names `path` joins to a folder (os.path.join's later arguments, pathlib's `/`)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        parts = []
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join":
            parts = node.args[1:]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts = [node.right]
        found |= {p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)}
    return found


def test_no_module_but_the_layout_joins_a_run_folder_file_name_to_a_folder():
    assert {"opts.json", "metrics.jsonl", "results.json", "train.log", "run.lock", "trial.json"} <= NAMES
    joins = []
    for path in sorted((REPO / "playground").rglob("*.py")):
        where = str(path.relative_to(REPO))
        if where not in OWNERS:
            joins += [f"{where} joins {name}" for name in sorted(joined_names(path) & NAMES)
                      if (where, name) not in OTHER_FOLDERS]
    assert joins == [], "name these files through playground.outputs.run_folder.RunFolder"


def test_the_layout_imports_without_torch():
    code = ("import sys; import playground.outputs.run_folder; "
            "print(sorted(m for m in ('torch', 'numpy', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_run_writes_its_files_where_run_folder_names_them(tmp_path):
    folder = RunFolder(str(tmp_path / "run"))
    opts = tiny_opts()
    run(opts, run_dir=folder.path)
    assert json.loads(open(folder.opts, encoding="utf-8").read())["opts"]["model"]["model_name_py"]
    records = [json.loads(line) for line in open(folder.metrics, encoding="utf-8")]
    assert json.loads(open(folder.results, encoding="utf-8").read())["records"] == len(records) > 0
    assert "INFO" in open(folder.log, encoding="utf-8").read()
    assert folder.plots() == sorted(folder.plot(i, spec) for i, spec in enumerate(opts["output"]["plots"]))
    assert folder.plots() and all(name.endswith(".png") for name in folder.plots())
    assert any(name.endswith(".pt") for name in os.listdir(folder.checkpoints))
