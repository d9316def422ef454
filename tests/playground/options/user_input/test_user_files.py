"""Every file a user gives is read by one reader (playground/options/user_input/user_files.py): the same bad files
(not UTF-8, binary, empty, 50 MB, a YAML alias bomb) given to each real command end it with exit 2 and one line
that names the file, before anything is created."""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from tests import zygote
from tests.conftest import HANG, REPO, tiny_opts

TOY = REPO / "tests" / "playground" / "candle" / "toy_benchmark"
SPACE = {"model_param.base_learning_rate": {"type": "log", "minval": -3, "maxval": 0}}
ALIAS_BOMB = "entrypoint: model_def:Trial\ndata:\n  a: &a [" + ", ".join(['"lol"'] * 9) + "]\n" + "".join(
    f"  {name}: &{name} [{', '.join([f'*{prior}'] * 9)}]\n" for prior, name in zip("abcdefgh", "bcdefghi"))


def _bad_files(folder: Path) -> dict[str, Path]:
    files = {"non-UTF-8": b'{"opts": {}}\n# caf\xe9 in Latin-1\n', "binary": bytes(range(256)) * 4, "empty": b"",
             "alias bomb": ALIAS_BOMB.encode()}
    paths = {}
    for kind, data in files.items():
        paths[kind] = folder / kind.replace(" ", "-")
        paths[kind].write_bytes(data)
    paths["50 MB"] = folder / "50MB"
    with open(paths["50 MB"], "w", encoding="utf-8") as handle:    # valid text that every parser would read
        line = "# " + "x" * 98 + "\n"
        handle.write(line * (50 * 10**6 // len(line)))
    return paths


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory) -> dict[str, Path]:
    return _bad_files(tmp_path_factory.mktemp("bad-files"))


def _spec(folder: Path, **top) -> str:
    spec = {"name": "s", "base": "good.json", "objective": {"metric": "test_loss", "mode": "min"},
            "searcher": {"name": "random", "max_trials": 1}, "space": SPACE, **top}
    (folder / "spec.json").write_text(json.dumps(spec))
    return "spec.json"


# reader -> (the bad file's name in the work folder, the command that reads it, given the folder and that name)
READERS = {
    "opts file": ("opts.json", lambda f, bad: ["run", "--parameters-file", bad, "--run-dir", "run"]),
    "INI defaults file": ("defaults.ini", lambda f, bad: ["run", "--parameters-file", "good.json", "--defaults-file",
                                                          bad, "--run-dir", "run"]),
    "sweep spec (YAML)": ("spec.yaml", lambda f, bad: ["sweep", "run", bad, "--sweep-dir", "sweep"]),
    "sweep spec (JSON)": ("sweep.json", lambda f, bad: ["sweep", "run", bad, "--sweep-dir", "sweep"]),
    "upf file": ("runs.upf", lambda f, bad: ["sweep", "run", "--upf", bad, "--base", "good.json", "--sweep-dir",
                                             "sweep"]),
    "restart CSV": ("prior.csv", lambda f, bad: ["sweep", "run", _spec(f), "--restart-file", bad, "--sweep-dir",
                                                 "sweep"]),
    "R parameter set": ("space.R", lambda f, bad: ["sweep", "run", _spec(f, space=bad), "--sweep-dir", "sweep"]),
    "Determined YAML": ("experiment.yaml", lambda f, bad: ["run", bad, "--run-dir", "run"]),
    "module map": ("my_map.py", lambda f, bad: ["run", "--parameters-file", "good.json", "--module-map", bad,
                                                "--run-dir", "run"]),
    "CANDLE parameters file": ("params.json", lambda f, bad: ["candle", str(TOY / "toy.py"), "--parameters-file",
                                                              bad, "--run-dir", "run"]),
    "CANDLE defaults file": ("toy.txt", lambda f, bad: ["candle", str(TOY / "toy.py"), "--defaults-file", bad,
                                                        "--run-dir", "run"]),
    "make-lmdb list": ("train.txt", lambda f, bad: ["make-lmdb", "images", "out", "--list", bad]),
}
YAML_READERS = ("sweep spec (YAML)", "Determined YAML")
KINDS = ["non-UTF-8", "binary", "empty", "50 MB", "alias bomb"]


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("reader", list(READERS))
def test_a_bad_file_ends_the_command_with_one_line_naming_it_and_nothing_created(tmp_path, bad_files, reader, kind):
    name, command = READERS[reader]
    work = tmp_path / "work"
    work.mkdir()
    (work / "good.json").write_text(json.dumps({"opts": tiny_opts()}))
    (work / "images").mkdir()
    os.link(bad_files[kind], work / name)            # the same bytes for every reader, without 50 MB copies
    argv = command(work, name)
    before = _tree(work)
    done = zygote.run([sys.executable, "-m", "playground", *argv], cwd=work, capture_output=True, text=True,
                      timeout=HANG, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, f"{reader}, {kind}: exit {done.returncode}\n{done.stderr[-3000:]}"
    assert lines and name in lines[0] and all(line[:1].isspace() for line in lines[1:]), \
        f"{reader}, {kind}: {done.stderr[-3000:]}"
    if kind != "alias bomb" or reader in YAML_READERS:   # else a syntax error, shown as its format's parser shows
        assert len(lines) == 1, f"{reader}, {kind}: {done.stderr[-3000:]}"   # one (JSON: the line and a caret)
    if kind in ("non-UTF-8", "binary"):
        assert "byte offset" in lines[0], lines[0]
    assert _tree(work) == before, f"{reader}, {kind}: created {_tree(work) - before}"
    shutil.rmtree(work)
