"""The tree shows the architecture, and its dependency rules hold (playground/__init__.py lists the parts).

Imports are read from the source (including imports inside functions, which are dependencies too), so a rule
broken anywhere fails here with the file and the import that breaks it.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "playground"
ENTRY_POINTS = {"__init__.py", "__main__.py", "cli.py", "api.py"}
MAX_LINES = 400


def imports_of(path: Path) -> list[str]:
    """Every module `path` imports, as absolute dotted names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names]
    return found


def sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def offenders(folder: Path, forbidden: tuple[str, ...]) -> list[str]:
    bad = []
    for path in sources(folder):
        for name in imports_of(path):
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                bad.append(f"{path.relative_to(REPO)} imports {name}")
    return sorted(set(bad))


def test_no_framework_module_outside_a_subpackage_but_the_entry_points():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ENTRY_POINTS)
    assert loose == [], f"move these into the subpackage of their part of the architecture: {loose}"


def test_no_framework_file_passes_the_length_where_it_holds_two_ideas():
    long = [f"{p.relative_to(REPO)} ({n} lines)" for p in sources(PACKAGE)
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]
    assert long == [], f"split these files: {long}"


def test_the_framework_never_imports_a_concrete_component():
    assert offenders(PACKAGE, ("components",)) == []


def test_options_know_nothing_of_training():
    others = tuple(f"playground.{p.name}" for p in PACKAGE.iterdir()
                   if p.is_dir() and p.name not in ("options", "__pycache__"))
    assert offenders(PACKAGE / "options", others + ("playground.api",)) == []


def test_data_knows_nothing_of_the_trainer():
    forbidden = ("playground.trainer", "playground.launch", "playground.checkpoints", "playground.commands",
                 "playground.sweeps")
    assert offenders(PACKAGE / "data", forbidden) == []


def test_nothing_imports_the_command_line():
    bad = [line for line in offenders(PACKAGE, ("playground.commands",))
           if not line.startswith(("playground/cli.py", "playground/commands/"))]
    for folder in (REPO / "components", REPO / "benchmarks"):
        bad += offenders(folder, ("playground.commands", "playground.cli"))
    assert bad == []


@pytest.mark.parametrize("part", ["sweeps"])
def test_the_sweep_layer_never_imports_the_trainer(part):
    folder = PACKAGE / part
    if not folder.is_dir():
        pytest.skip(f"playground/{part} does not exist yet")
    forbidden = ("playground.trainer", "playground.launch", "playground.distribution", "playground.checkpoints",
                 "torch")
    assert offenders(folder, forbidden) == []


def test_components_import_the_framework_through_its_public_surface_only():
    bad = [line for line in offenders(REPO / "components", ("playground",))
           if not line.endswith(("imports playground.api",)) and " imports playground.api." not in line]
    assert bad == []
