"""Keys nobody declared: which are errors (inside what the framework owns, or everywhere with --strict), which
are warnings (a component may read them), which are the original's ignored internal keys; and did-you-mean hints.
"""
from __future__ import annotations

import difflib
import fnmatch

from playground.options.builtin import IGNORED_KEYS
from playground.options.declaration import Opt
from playground.options.value_types import Anything, Mapping

# Sections and keys the framework owns: an undeclared key there is a typo (`num_epoch`), never a component's key.
OWNED = ("epoch_iter.*", "distributed.*", "output.ckpt_*")


def unknown_keys(raw: dict, declarations: dict[str, Opt], strict: bool) -> tuple[list[str], list[str]]:
    """(errors, warnings) about keys nobody in this run declares."""
    known = set(declarations)
    sections = {p.split(".", 1)[0] for p in known}
    containers = {p for p, d in declarations.items() if isinstance(d.type, (Mapping, Anything))}
    errors, warnings = [], []
    for path in leaf_paths(raw, stop=known | containers):
        if path in known or is_ignored(path) or any(path.startswith(c + ".") for c in containers):
            continue
        top = path.split(".", 1)[0]
        if top not in sections:
            text = f"opts.{top}: unknown section"
            (errors if strict else warnings).append(
                f"{text}{'' if strict else ' (kept as given)'}. {closest_hint(top, sorted(sections))}")
            continue
        if strict or any(fnmatch.fnmatchcase(path, pattern) for pattern in OWNED):
            errors.append(f"opts.{path}: not a known key{_declared_elsewhere(path)}. {closest_hint(path, sorted(known))}")
        else:
            warnings.append(f"opts.{path}: not a known key (kept for components that read it). "
                            f"{closest_hint(path, sorted(known))}")
    return list(dict.fromkeys(errors)), list(dict.fromkeys(warnings))


def _declared_elsewhere(path: str) -> str:
    """Which registered components read `path`, when none of this run's does (imports them: error path only)."""
    from playground.options.component_keys import component_declarations
    readers = sorted({r for d in component_declarations() if d.path == path for r in d.readers})
    return f" of this run's components (it is read by {', '.join(readers)}, which this run does not use)" if readers else ""


def closest_hint(name: str, candidates: list[str]) -> str:
    """`Did you mean 'x'?` for the candidate closest to `name` (by full path, then by last part), else ""."""
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if not close:
        tails = {c.rsplit(".", 1)[-1]: c for c in candidates}
        tail_close = difflib.get_close_matches(name.rsplit(".", 1)[-1], list(tails), n=1, cutoff=0.7)
        close = [tails[t] for t in tail_close]
    return f"Did you mean {close[0]!r}?" if close else ""


def is_ignored(path: str) -> bool:
    """Whether `path` or one of its ancestors (input.train_partition for input.train_partition.ds) is ignored."""
    parts = path.split(".")
    ancestors = [".".join(parts[:n]) for n in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatchcase(p, pattern) for p in ancestors for pattern in IGNORED_KEYS)


def leaf_paths(tree: dict, prefix: str = "", stop: set[str] | None = None) -> list[str]:
    out = []
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and not (stop and path in stop):
            out.extend(leaf_paths(value, path + ".", stop))
        else:
            out.append(path)
    return out
