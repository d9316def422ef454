"""The tree shows the architecture, and its dependency rules hold (playground/__init__.py lists the parts).

Imports are read from the source (including imports inside functions, which are dependencies too), so a rule
broken anywhere fails here with the file and the import that breaks it. From the same imports: no circles between
modules, no package of more than 15 modules, no arrow from a lower floor to a higher one (playground's parts, and
the sweep layer's floors), and no use of a moved module's old path.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "playground"
EXIT_CODES_MODULE = "playground.processes.exit_codes"
ENTRY_POINTS = {"__init__.py", "__main__.py", "cli.py", "api.py",
                "_moved_paths.py"}   # the package root's table of old module paths (__init__ installs its finder)
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


@pytest.mark.parametrize("part", ["sweeps", "ui"])
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


# --- the import graph: modules of playground/ and the arrows between them (imports inside functions included) ---

MAX_MODULES = 15   # modules directly in one package; past that it is sub-packages by concern (as Optuna splits)
# Playground's parts, lowest first: a module may import its own part and those before it, never one after it.
# The entry points (playground/__init__.py, __main__.py, cli.py, api.py) stand outside the floors. A part named
# here need not exist yet (processes/: the exit codes and the one supervisor, below everything; compat/: the
# foreign APIs mapped onto ours, which the core never imports).
TOP_LAYERS = ["processes", "options", "restarts", "outputs", "distribution", "data", "checkpoints", "trainer",
              "launch", "candle", "determined", "sweeps", "compat", "ui", "commands"]
# The sweep layer's floors, lowest first (playground/sweeps/<name>/ or <name>.py).
SWEEP_LAYERS = ["errors", "inputs", "files", "search", "results", "agents", "operations"]
# `playground ui`'s floors, lowest first (playground/ui/<name>/).
UI_LAYERS = ["files", "views", "web"]


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the playground modules it imports (an imported name resolved to the module that defines it)."""
    modules = {module_name(p): p for p in sources(PACKAGE)}
    graph = {}
    for name, path in modules.items():
        targets = set()
        for imported in imports_of(path):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, arrows = work[-1]
            target = next(arrows, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_circle_finder_finds_a_circle_and_nothing_else():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_import_circles_between_modules():
    assert circles(import_graph()) == []


# The rest of the repository's Python: the components, the benchmark scripts (which import each other by bare
# name, their folder first on sys.path), the ready-made experiments and the top-level entry points.
REPOSITORY_FOLDERS = ("components", "benchmarks", "experiments")
TOP_LEVEL_SCRIPTS = ("AnyExpOnTerm.py", "module_map.py")


def repository_graph() -> dict[str, set[str]]:
    """import_graph() widened to every module of the repository (REPOSITORY_FOLDERS, TOP_LEVEL_SCRIPTS)."""
    paths = [*sources(PACKAGE), *(p for f in REPOSITORY_FOLDERS for p in sources(REPO / f)),
             *(REPO / name for name in TOP_LEVEL_SCRIPTS)]
    modules = {module_name(p): p for p in paths}
    graph = {}
    for name, path in modules.items():
        bare = name.split(".")[0] == "benchmarks"
        targets = set()
        for imported in imports_of(path):
            candidates = [f"benchmarks.{imported}", imported] if bare else [imported]
            for candidate in candidates:
                while candidate and candidate not in modules:
                    candidate = candidate.rpartition(".")[0]
                if candidate:
                    break
            if candidate and candidate != name:
                targets.add(candidate)
        graph[name] = targets
    return graph


def test_no_import_circles_anywhere_in_the_repository():
    """benchmarks/parity.py and parity_lightning.py once imported each other; the job they share is parity_job.py."""
    graph = repository_graph()
    assert {"benchmarks.parity", "components.inputs.synthetic_input", "AnyExpOnTerm"} <= set(graph)
    assert "benchmarks.parity_job" in graph["benchmarks.parity_lightning"], "bare names must resolve, or no circle shows"
    assert circles(graph) == []


ENTRY_POINT_MODULES = ("playground.cli", "playground.api", "playground.__main__")


def test_no_floor_of_playground_imports_an_entry_point():
    """cli.py, api.py and __main__.py stand above every floor (the package root's own __init__ is imported by
    every playground import anyway): a floor that imported one would climb back up, as commands/demo.py once ran
    make-lmdb and run through cli.py (it uses commands/dispatch.py now, on its own floor)."""
    bad = [f"{source} imports {target}" for source, targets in import_graph().items()
           if source not in ENTRY_POINT_MODULES for target in targets if target in ENTRY_POINT_MODULES]
    assert bad == []


def test_the_top_level_scripts_start_playground_through_its_command_line_only():
    """AnyExpOnTerm.py is `playground run`: it reaches the framework through cli.py and the held stop it needs
    first, not through a floor (module_map.py is a table and imports nothing of playground)."""
    imported = {name for script in TOP_LEVEL_SCRIPTS for name in imports_of(REPO / script)
                if name.split(".")[0] == "playground"}
    assert imported and imported <= {"playground.cli", "playground.cli.exit_command", "playground.cli.own_process",
                                     "playground.cli.run_main", "playground.processes",
                                     "playground.processes.held_stop"}, imported


def test_no_package_holds_more_modules_than_a_newcomer_scans_at_once():
    crowded = []
    for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
        modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
        if len(modules) > MAX_MODULES:
            crowded.append(f"{folder.relative_to(REPO)} ({len(modules)} modules)")
    assert crowded == [], f"split these into sub-packages by concern: {crowded}"


def floor(module: str, package: str, layers: list[str]) -> int | None:
    """The index in `layers` of the part of `package` that holds `module`; None for the package's own __init__."""
    rest = module.removeprefix(package + ".") if module.startswith(package + ".") else None
    if not rest:
        return None
    part = rest.split(".")[0]
    assert part in layers, f"{module}: place playground's {part!r} in the layers of {package} in this test"
    return layers.index(part)


def upward_arrows(package: str, layers: list[str], skip: set[str] = frozenset()) -> list[str]:
    """`a -> b` for each import from a lower floor of `package` to a higher one."""
    bad = []
    for source, targets in import_graph().items():
        if source.rpartition(".")[2] in skip and source.count(".") == 1:
            continue
        low = floor(source, package, layers)
        for target in targets:
            if target.count(".") == 1 and target.rpartition(".")[2] in skip:
                continue
            high = floor(target, package, layers)
            if low is not None and high is not None and high > low:
                bad.append(f"{source} ({layers[low]}) -> {target} ({layers[high]})")
    return sorted(bad)


def test_no_sweep_module_imports_a_higher_floor_of_the_sweep_layer():
    assert upward_arrows("playground.sweeps", SWEEP_LAYERS) == []


def test_no_ui_module_imports_a_higher_floor_of_the_ui():
    assert upward_arrows("playground.ui", UI_LAYERS) == []


def test_no_part_of_playground_imports_a_later_part():
    entry_points = {p.removesuffix(".py") for p in ENTRY_POINTS}
    assert upward_arrows("playground", TOP_LAYERS, skip=entry_points) == []


def test_nothing_in_the_repository_imports_a_moved_module_by_its_old_path():
    """Old paths warn (DeprecationWarning); the repository's own code and docs use the new ones."""
    from playground._moved_paths import MOVED
    old = tuple(f"playground.{name}" for name in MOVED)
    bad = [line for folder in ("playground", "components", "tests", "benchmarks", "experiments")
           for line in offenders(REPO / folder, old)]
    for page in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]:
        for imported in re.findall(r"(?:from|import)\s+(playground(?:\.\w+)+)", page.read_text(encoding="utf-8")):
            if any(imported == o or imported.startswith(o + ".") for o in old):
                bad.append(f"{page.relative_to(REPO)} imports {imported}")
    assert bad == []


OPTUNA_PRIVATE = PACKAGE / "sweeps" / "search" / "_optuna_private.py"
# Private attributes of Optuna's objects the sweep layer needs (Study._storage, FrozenTrial._trial_id, ...).
OPTUNA_PRIVATE_ATTRIBUTES = {"_storage", "_study_id", "_trial_id", "_contains", "_suggest", "_stub", "_cache",
                             "_build_frozen_trial_from_trial_model", "_setup"}


def test_optunas_private_api_is_used_in_one_module_only():
    """search/_optuna_private.py says why each use is needed; an Optuna upgrade that moves one breaks there."""
    def private(path: Path) -> list[str]:
        found = [f"imports {name}" for name in imports_of(path)
                 if name.split(".")[0] == "optuna" and any(part.startswith("_") for part in name.split("."))]
        found += [f"uses .{node.attr}" for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                  if isinstance(node, ast.Attribute) and node.attr in OPTUNA_PRIVATE_ATTRIBUTES]
        return [f"{path.relative_to(REPO)} {what}" for what in found]

    assert private(OPTUNA_PRIVATE), "the rule finds nothing: it would pass whatever the code does"
    assert [line for path in sources(PACKAGE) if path != OPTUNA_PRIVATE for line in private(path)] == []


def test_only_the_search_floor_imports_optuna():
    """Elsewhere the sweep layer works on the study it is handed, and reads trial states (optuna.trial.TrialState)."""
    search = PACKAGE / "sweeps" / "search"
    bad = [line for line in offenders(PACKAGE, ("optuna",))
           if not line.startswith(str(search.relative_to(REPO)) + "/")
           and line.split(" imports ")[1] not in ("optuna.trial", "optuna.trial.TrialState")]
    assert offenders(search, ("optuna",)), "the rule finds nothing: it would pass whatever the code does"
    assert bad == []


def test_only_playgrounds_candle_imports_pandas_or_h5py():
    """They are the optional extra `candle` (setup.cfg): candle_lib's data utilities need them, nothing else may."""
    candle = PACKAGE / "compat" / "candle"
    found = [line for folder in ("playground", "components", "experiments", "benchmarks")
             for line in offenders(REPO / folder, ("pandas", "h5py"))]
    assert offenders(candle, ("pandas",)), "the rule finds nothing: it would pass whatever the code does"
    assert [line for line in found if not line.startswith(str(candle.relative_to(REPO)) + "/")] == []


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


def returned_exit_codes(path: Path) -> list[str]:
    """`file:line function` for each exit code a function returns as a number. A function returns exit codes when
    it is annotated `-> int` and is a `main`, a `run_*`, or returns an EXIT_* name anywhere."""
    found = []
    for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(function, ast.FunctionDef) or function.returns is None \
                or ast.unparse(function.returns) != "int":
            continue
        returned = [node.value for node in ast.walk(function) if isinstance(node, ast.Return) and node.value]
        returned += [branch for value in returned if isinstance(value, ast.IfExp)
                     for branch in (value.body, value.orelse)]
        if not (function.name == "main" or function.name.startswith("run_")
                or any(isinstance(node, ast.Name) and node.id.startswith("EXIT_")
                       for value in returned for node in ast.walk(value))):
            continue
        found += [f"{path.relative_to(REPO)}:{value.lineno} {function.name} returns {value.value}"
                  for value in returned
                  if isinstance(value, ast.Constant) and type(value.value) is int and value.value in PRODUCT_EXIT_CODES]
    return found


def test_a_function_that_returns_an_exit_code_returns_its_name():
    """`return EXIT_USAGE`, never `return 2` (launch/one_batch_run.py once returned 2/1/0)."""
    spelled = [found for path in sources(PACKAGE) for found in returned_exit_codes(path)]
    assert spelled == [], f"use the names of {EXIT_CODES_MODULE}: {spelled}"


def test_the_ground_floor_names_no_module_above_it_even_as_a_string():
    """processes/ imports nothing of playground, and does not reach up by a module's name either (a fork server's
    preload list once named playground.launch.worker there): what a higher floor's ranks import, it passes in."""
    named = [f"{path.relative_to(REPO)}:{node.lineno} {node.value}" for path in sources(PACKAGE / "processes")
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(node.value, str)
             and re.fullmatch(r"playground(\.\w+)+", node.value) and not node.value.startswith("playground.processes.")]
    assert named == []


def test_the_supervisor_imports_no_torch_when_imported():
    """The sweep layer uses it and never imports torch: torch is imported inside the function that needs it."""
    tree = ast.parse((PACKAGE / "processes" / "supervisor.py").read_text(encoding="utf-8"))
    top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    names = [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
    names += [n.module for n in top if isinstance(n, ast.ImportFrom) and n.module]
    assert not any(name == "torch" or name.startswith("torch.") for name in names), names
