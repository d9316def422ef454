"""An experiment YAML is bounded before it is read (size, alias expansion) and its shape is checked at every level:
each problem one message naming its dotted path and line, exit 2, no traceback, nothing written."""
from __future__ import annotations

import os
import sys
import time

from tests import zygote
from tests.conftest import HANG

SEARCHER = "searcher: {name: single, metric: validation_loss, max_length: {batches: 4}}\n"


def _playground(*args: str, cwd, env: dict | None = None):
    return zygote.run([sys.executable, "-m", "playground", *args], cwd=cwd, capture_output=True, text=True,
                      timeout=HANG, env={**os.environ, **(env or {})})


def _bomb(levels: int) -> str:
    """`data:` whose aliases expand to 9**levels strings (9**7: 4.8 million, 60 MB once written out)."""
    names = "abcdefghijkl"[:levels]
    lines = [f"  a: &a [{', '.join(['lol'] * 9)}]"]
    lines += [f"  {name}: &{name} [{', '.join([f'*{prior}'] * 9)}]" for prior, name in zip(names, names[1:])]
    return "entrypoint: model_def:Trial\n" + SEARCHER + "data:\n" + "\n".join(lines) + "\n"


def test_an_alias_bomb_in_data_is_refused_before_it_expands_into_the_run(tmp_path):
    (tmp_path / "bomb.yaml").write_text(_bomb(7))
    for extra in (["--dry-run"], ["--run-dir", "run"]):
        done = _playground("run", "bomb.yaml", *extra, cwd=tmp_path)
        assert done.returncode == 2, done.stderr[-2000:]
        assert done.stderr.count("\n") == 1 and "bomb.yaml" in done.stderr and "alias" in done.stderr, done.stderr
        assert len(done.stdout) < 1000 and not (tmp_path / "run").exists()


def test_a_56_mb_data_section_is_refused_at_once_not_parsed_for_a_minute(tmp_path):
    """On main `--dry-run` read it for 96 s and 2.2 GB; a file past the bound is refused from its size."""
    with open(tmp_path / "big.yaml", "w", encoding="utf-8") as handle:
        handle.write("entrypoint: model_def:Trial\n" + SEARCHER + "data:\n  rows:\n")
        row = "    - [" + ", ".join(["0.123456789"] * 8) + "]\n"
        handle.write(row * (56 * 10**6 // len(row)))
    started = time.monotonic()
    done = _playground("run", "big.yaml", "--dry-run", cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "big.yaml" in done.stderr and "over the 8 MiB" in done.stderr and "PLAYGROUND_MAX_INPUT_MIB" in done.stderr
    assert time.monotonic() - started < 30            # the command's start-up; the refusal itself reads nothing
    small = tmp_path / "small.yaml"
    small.write_text("entrypoint: model_def:Trial\n" + SEARCHER + "data: {rows: [" + "1, " * 400_000 + "1]}\n")
    assert _playground("run", "small.yaml", "--dry-run", cwd=tmp_path).returncode == 0   # 1.2 MB: under the bound
    refused = _playground("run", "small.yaml", "--dry-run", cwd=tmp_path, env={"PLAYGROUND_MAX_INPUT_MIB": "1"})
    assert refused.returncode == 2 and "over the 1 MiB" in refused.stderr


def test_four_wrong_types_at_nested_levels_are_one_message_each_naming_the_path(tmp_path):
    (tmp_path / "exp.yaml").write_text(
        "entrypoint: model_def:Trial\n"
        "searcher:\n  name: [single]\n  metric: validation_loss\n  max_length: {batches: 4}\n"
        "resources: 4\n"
        "environment: [A=1]\n"
        "optimizations:\n  aggregation_frequency: 1\n  7: x\n"
        "hyperparameters: {global_batch_size: 8}\n")
    done = _playground("run", "exp.yaml", "--dry-run", cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-3000:]
    lines = done.stderr.strip().splitlines()
    assert lines[0] == "playground: error: 4 problems in the experiment configuration:", done.stderr
    where = {line.split(": ")[1] for line in lines[1:]}
    assert where == {"searcher.name", "resources", "environment", "optimizations.7"}, done.stderr
    path = str(tmp_path / "exp.yaml")
    assert all(line.startswith(f"  - {path}, line ") for line in lines[1:]), done.stderr


def test_a_null_entrypoint_is_named_as_missing_not_a_key_error(tmp_path):
    (tmp_path / "exp.yaml").write_text("entrypoint:\n" + SEARCHER)
    done = _playground("run", "exp.yaml", "--dry-run", cwd=tmp_path)
    assert done.returncode == 2 and "entrypoint: required" in done.stderr and "Traceback" not in done.stderr
