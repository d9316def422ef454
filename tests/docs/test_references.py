"""What README.md, docs/*.md and benchmarks/README.md name exists: repository paths, file names, modules, links
and anchors, and the options of the `playground` command lines they show. A file renamed or moved fails here with
the page and line that still names it (docs/checkpoints.md once mapped its code to files renamed long before)."""
from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

PAGES = sorted((REPO / "docs").glob("*.md")) + [REPO / "README.md", REPO / "benchmarks" / "README.md"]
TOP_LEVEL = ("playground", "tests", "components", "benchmarks", "experiments", "docs")
SKIPPED_FOLDERS = {".git", ".venv", "__pycache__", "runs", "demo-data", "build"}
# Files the docs ask the reader to write, or that CANDLE's own user guide names: not in the repository.
EXAMPLES = {"experiments/my_finetune.json", "mnist_mlp.py", "mnist_mlp_candle.py", "step_counter.py"}

PATH = re.compile(r"(?<![\w/.<-])((?:%s)/[\w./*-]*)" % "|".join(TOP_LEVEL))
CODE = re.compile(r"`([^`\n]+)`")
BARE_PY = re.compile(r"^[\w-]+\.py$")
MODULE = re.compile(r"^((?:playground|components)(?:\.\w+)+)(?:\(.*)?$")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def repository_file_names() -> set[str]:
    names = set()
    for _, folders, files in os.walk(REPO):
        folders[:] = [f for f in folders if f not in SKIPPED_FOLDERS and not f.endswith(".egg-info")]
        names.update(files)
    return names


def line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def where(page: Path, text: str, offset: int) -> str:
    return f"{page.relative_to(REPO)}:{line_of(text, offset)}"


def path_exists(path: str) -> bool:
    path = path.rstrip(".")
    return path in EXAMPLES or (any(REPO.glob(path)) if "*" in path else (REPO / path).exists())


def module_exists(dotted: str) -> bool:
    """`a.b.c.Name`: the longest prefix that is a module file or package, and the rest defined in its source."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        base = REPO.joinpath(*parts[:cut])
        source = base.with_suffix(".py") if base.with_suffix(".py").is_file() else base / "__init__.py"
        if source.is_file():
            rest = parts[cut:]
            return not rest or re.search(rf"\b{re.escape(rest[0])}\b", source.read_text(encoding="utf-8")) is not None
    return False


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = (line.lstrip("#").strip() for line in page.read_text(encoding="utf-8").splitlines()
                if line.startswith("#"))
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def stale_names(page: Path, file_names: set[str], text: str | None = None) -> list[str]:
    """`page:line: name` for each name in the page (or in `text`, as if it were the page) that is not there."""
    text = page.read_text(encoding="utf-8") if text is None else text
    stale = [f"{where(page, text, m.start())}: {m.group(1)}" for m in PATH.finditer(text)
             if not path_exists(m.group(1))]
    for m in CODE.finditer(text):
        code = m.group(1).strip()
        if BARE_PY.match(code) and code not in file_names and code not in EXAMPLES:
            stale.append(f"{where(page, text, m.start())}: {code} (no file of that name)")
        module = MODULE.match(code)
        if module and not module_exists(module.group(1)):
            stale.append(f"{where(page, text, m.start())}: {code} (no such module or name)")
    for m in LINK.finditer(text):
        target, _, anchor = m.group(1).partition("#")
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        linked = (page.parent / target).resolve() if target else page
        if not linked.exists():
            stale.append(f"{where(page, text, m.start())}: link to {m.group(1)} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            stale.append(f"{where(page, text, m.start())}: link to {m.group(1)} (no such heading)")
    return stale


def test_docs_name_only_files_modules_and_headings_that_exist():
    file_names = repository_file_names()
    stale = [line for page in PAGES for line in stale_names(page, file_names)]
    assert stale == [], "the docs name what is not there (renamed or moved?):\n" + "\n".join(stale)


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def option_strings(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings}


def unknown_options(page: Path, top: argparse.ArgumentParser, text: str | None = None) -> list[str]:
    """`page:line: playground CMD ... --option` for each option a command line in the page shows that its
    command (or sweep action) does not accept."""
    text = page.read_text(encoding="utf-8") if text is None else text
    commands, unknown = subcommands(top), []
    # a command line runs to the end of its code span or line, or on past a `\` at a line's end
    for m in re.finditer(r"(?:^|[`\s/])(playground|AnyExpOnTerm\.py)\s+((?:[^`\n|#\\]|\\\n|\\)*)", text, re.M):
        words = m.group(2).split()
        if m.group(1) == "AnyExpOnTerm.py":
            words = ["run", *words]
        if not words or (words[0] not in commands and not words[0].startswith("-")):
            continue                          # prose ("playground is ..."), not a command line
        parser = commands.get(words[0], top)
        actions = subcommands(parser)
        if actions and len(words) > 1 and words[1] in actions:
            parser = actions[words[1]]
        known = option_strings(parser)
        if any(action.nargs == argparse.REMAINDER for action in parser._actions):
            # `playground candle SCRIPT --epochs 3`: what follows the script is the script's own command line
            script = next((i for i, word in enumerate(words) if word.endswith(".py")), len(words))
            words = words[:script + 1]
        unknown += [f"{where(page, text, m.start(1))}: playground {' '.join(words[:2])} ... {option.group(1)}"
                    for word in words if (option := re.match(r"\[?(--[\w-]+)", word))
                    and option.group(1) not in known]
    return unknown


def test_command_lines_in_the_docs_use_only_options_the_command_has():
    from playground.cli import build_parser   # argparse and the command modules only: no torch

    top = build_parser()
    unknown = [line for page in PAGES for line in unknown_options(page, top)]
    assert unknown == [], "options the commands do not have:\n" + "\n".join(unknown)
    text = "Run\n\n.venv/bin/playground sweep run --upf FILE --workers 2 \\\n        --no-such-option\n" \
           "    python AnyExpOnTerm.py --parameters-file exp.json --no-such-flag\n"
    assert unknown_options(REPO / "docs" / "sweeps.md", top, text) == [
        "docs/sweeps.md:3: playground sweep run ... --no-such-option",
        "docs/sweeps.md:5: playground run --parameters-file ... --no-such-flag"]


@pytest.mark.parametrize("stale, reported", [
    ("`playground/checkpoints/checkpoint_keep.py`", "playground/checkpoints/checkpoint_keep.py"),
    ("`checkpoint_policy.py`", "checkpoint_policy.py (no file of that name)"),
    ("`tests/playground/test_checkpoint*.py`", "tests/playground/test_checkpoint*.py"),
    ("`playground.candle.NoSuchHelper`", "playground.candle.NoSuchHelper (no such module or name)"),
    ("[fencing](checkpoints.md#no-such-heading)", "link to checkpoints.md#no-such-heading (no such heading)"),
    ("[fencing](no-such-page.md)", "link to no-such-page.md (no such file)"),
])
def test_each_kind_of_stale_name_is_found_and_the_existing_ones_pass(stale, reported):
    text = f"Code: `playground/checkpoints/keep.py`, `keep.py`, `playground.candle.CandleCheckpoint`,\n{stale}.\n"
    found = stale_names(REPO / "docs" / "checkpoints.md", repository_file_names(), text)
    assert found == [f"docs/checkpoints.md:2: {reported}"]
