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


def test_a_byte_order_mark_is_dropped_and_utf16_is_named_with_what_to_do(tmp_path):
    from playground.options.user_input.user_files import UserFileError, read_json, read_text
    (tmp_path / "bom.json").write_bytes(b'\xef\xbb\xbf{"opts": {}}')
    assert read_json(str(tmp_path / "bom.json"), "the opts file") == {"opts": {}}
    (tmp_path / "utf16.json").write_bytes('{"opts": {}}'.encode("utf-16"))
    with pytest.raises(UserFileError, match=r"utf16.json: the opts file is UTF-16 text .* save it as UTF-8"):
        read_text(str(tmp_path / "utf16.json"), "the opts file")
    (tmp_path / "late.txt").write_bytes(b"line one\nline two \xff\n")
    with pytest.raises(UserFileError, match=r"byte 0xFF at byte offset 18, line 2"):
        read_text(str(tmp_path / "late.txt"), "the list")


def test_yaml_aliases_within_the_bound_load_and_a_self_containing_one_is_refused():
    from playground.options.user_input.user_files import UserFileError, parse_yaml
    assert parse_yaml("base: &b {lr: 0.1}\nfirst: *b\nsecond: {<<: *b, lr: 0.2}\n", "the spec", "s.yaml") == {
        "base": {"lr": 0.1}, "first": {"lr": 0.1}, "second": {"lr": 0.2}}
    with pytest.raises(UserFileError, match=r"s.yaml: the spec: an alias at line 1 names a node that contains it"):
        parse_yaml("a: &a [1, *a]\n", "the spec", "s.yaml")
    with pytest.raises(UserFileError, match=r"s.yaml, line \d+, column \d+: not valid YAML"):
        parse_yaml("a: [1, 2\n", "the spec", "s.yaml")


def test_the_size_bound_is_the_environments_when_set(tmp_path, monkeypatch):
    from playground.options.user_input.user_files import MAX_MIB_ENV, UserFileError, read_text
    (tmp_path / "two.txt").write_text("x" * (2 * 2**20))
    assert len(read_text(str(tmp_path / "two.txt"), "the file")) == 2 * 2**20
    monkeypatch.setenv(MAX_MIB_ENV, "1")
    with pytest.raises(UserFileError, match=r"the file is 2.0 MiB, over the 1 MiB .*\(set PLAYGROUND_MAX_INPUT_MIB"):
        read_text(str(tmp_path / "two.txt"), "the file")
