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
EXIT_CODES_MODULE = "playground.processes.exit_codes"
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
    """The opts may import the exit codes and the user-error base class, which import nothing (below)."""
    others = tuple(f"playground.{p.name}" for p in PACKAGE.iterdir()
                   if p.is_dir() and p.name not in ("options", "__pycache__"))
    bad = [line for line in offenders(PACKAGE / "options", others + ("playground.api",))
           if not line.split(" imports ")[1].startswith(EXIT_CODES_MODULE)]
    assert bad == []


def test_the_exit_codes_module_is_the_lowest_of_all():
    assert [name for name in imports_of(PACKAGE / "processes" / "exit_codes.py")
            if name.split(".")[0] != "__future__"] == []


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


# Calls that start a child process, by the dotted name they resolve to through the module's imports.
PROCESS_STARTERS = ("subprocess.Popen", "subprocess.run", "subprocess.call", "subprocess.check_call",
                    "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput", "os.fork",
                    "os.forkpty", "os.posix_spawn", "os.posix_spawnp", "os.system", "os.popen", "os.spawnv",
                    "os.spawnve", "os.spawnvp", "os.spawnvpe", "os.spawnl", "os.spawnle", "os.spawnlp", "os.spawnlpe",
                    "pty.fork", "pty.spawn", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
                    "multiprocessing.Process", "multiprocessing.Pool", "multiprocessing.get_context",
                    "multiprocessing.pool.Pool", "concurrent.futures.ProcessPoolExecutor",
                    "torch.multiprocessing.start_processes", "torch.multiprocessing.spawn",
                    "torch.multiprocessing.Process", "torch.multiprocessing.Pool", "torch.multiprocessing.get_context")
SUPERVISOR = "playground/processes/supervisor.py"
PRODUCT_EXIT_CODES = (0, 1, 2, 3, 4, 75)


def _aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> the dotted name it stands for, from every import in the module."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return names


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return ".".join([aliases.get(node.id, node.id), *reversed(parts)])


def process_starts(path: Path) -> list[str]:
    """`file:line name` for each call in `path` that starts a child process."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = _aliases(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = _dotted(node.func, aliases)
            if name in PROCESS_STARTERS:
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {name}")
    return found


def test_one_module_starts_every_child_process():
    """Ranks, restarted runs, sweep trials, worker pools, tools: all through playground/processes/supervisor.py."""
    starts = [start for path in sources(PACKAGE) for start in process_starts(path)]
    assert starts and all(start.startswith(SUPERVISOR + ":") for start in starts), \
        [start for start in starts if not start.startswith(SUPERVISOR + ":")]


def spelled_exit_codes(path: Path) -> list[str]:
    """`file:line what` for each exit code spelled as a number: an EXIT_* name bound to a literal, a literal
    passed to sys.exit/os._exit/exit/SystemExit, and the literal 75 anywhere."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases = _aliases(tree)
    found = []

    def literal(node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and type(node.value) is int and node.value in PRODUCT_EXIT_CODES

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            names += [e.id for t in node.targets if isinstance(t, ast.Tuple) for e in t.elts if isinstance(e, ast.Name)]
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            if any(n.startswith("EXIT_") for n in names) and any(literal(v) for v in values):
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {', '.join(names)} =")
        elif isinstance(node, ast.Call) and node.args and literal(node.args[0]):
            if _dotted(node.func, aliases) in ("sys.exit", "os._exit", "exit", "quit", "SystemExit"):
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {_dotted(node.func, aliases)}({node.args[0].value})")
        elif isinstance(node, ast.Constant) and type(node.value) is int and node.value == 75:
            found.append(f"{path.relative_to(REPO)}:{node.lineno} 75")
    return found


def test_one_module_names_the_exit_codes():
    """0, 1, 2, 75 (and the launcher-internal 3, 4) are named in playground/processes/exit_codes.py alone."""
    owner = PACKAGE / "processes" / "exit_codes.py"
    assert spelled_exit_codes(owner), "the rule finds nothing: it would pass whatever the code does"
    spelled = [found for path in sources(PACKAGE) if path != owner for found in spelled_exit_codes(path)]
    assert spelled == [], f"use the names of {EXIT_CODES_MODULE}: {spelled}"


def test_the_supervisor_imports_no_torch_when_imported():
    """The sweep layer uses it and never imports torch: torch is imported inside the function that needs it."""
    tree = ast.parse((PACKAGE / "processes" / "supervisor.py").read_text(encoding="utf-8"))
    top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    names = [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
    names += [n.module for n in top if isinstance(n, ast.ImportFrom) and n.module]
    assert not any(name == "torch" or name.startswith("torch.") for name in names), names
