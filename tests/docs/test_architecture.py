"""docs/architecture.md is in step with the code: its picture is the package graph computed from the imports, and
every package of playground/ has its paragraph. A new import arrow between packages fails here with the block to
paste, so the page a newcomer reads first never shows a house that is not there."""
from __future__ import annotations

import re

from tests.conftest import REPO
from tests.playground.test_package_layout import PACKAGE, imports_of, sources

PAGE = REPO / "docs" / "architecture.md"
ARROW = re.compile(r"^\s*(\w+)\s*-->\s*(\w+)\s*$")


def packages() -> list[str]:
    return sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())


def package_arrows() -> set[tuple[str, str]]:
    """(a, b) for each package a of playground/ with a module that imports something of package b."""
    names = set(packages())
    arrows = set()
    for name in names:
        for path in sources(PACKAGE / name):
            for imported in imports_of(path):
                parts = imported.split(".")
                if parts[0] == "playground" and len(parts) > 1 and parts[1] in names and parts[1] != name:
                    arrows.add((name, parts[1]))
    return arrows


def mermaid_block(arrows: set[tuple[str, str]]) -> str:
    return "```mermaid\nflowchart BT\n" + "".join(f"    {a} --> {b}\n" for a, b in sorted(arrows)) + "```"


def drawn_arrows() -> set[tuple[str, str]]:
    block = re.search(r"```mermaid\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert block, f"{PAGE.relative_to(REPO)} has no mermaid picture"
    return {m.groups() for line in block.group(1).splitlines() if (m := ARROW.match(line))}


def test_the_picture_is_the_package_graph_computed_from_the_imports():
    computed = package_arrows()
    assert drawn_arrows() == computed, (
        f"{PAGE.relative_to(REPO)} is out of step with the imports; its picture should be:\n"
        f"{mermaid_block(computed)}")


def test_every_package_has_its_paragraph():
    text = PAGE.read_text(encoding="utf-8")
    missing = [name for name in packages() if f"### `{name}/`" not in text]
    assert missing == [], f"{PAGE.relative_to(REPO)} has no paragraph (### `name/`) for {missing}"
