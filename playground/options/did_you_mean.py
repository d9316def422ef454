"""The one did-you-mean: which known names a mistyped name is probably meant to be. Callers word the hint
(`Did you mean 'opts.x'?`, `Closest registered names: a, b.`); this module decides which names it offers."""
from __future__ import annotations

import difflib
from typing import Iterable

TAIL_CUTOFF = 0.7   # a dotted name whose whole path matched nothing is compared by its last part, more strictly


def closest(name: str, candidates: Iterable[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """Up to `n` candidates that look like `name` mistyped, best first: the one equal but for case; else
    difflib's close matches (similarity at least `cutoff`); else, for a dotted name, those whose last part is
    close to its last part (`opts.trainer.lr` for `lr`). `name` itself is never offered."""
    candidates = [c for c in dict.fromkeys(candidates) if c != name]
    same_but_case = [c for c in candidates if c.lower() == name.lower()]
    if same_but_case:
        return same_but_case[:1]
    close = difflib.get_close_matches(name, candidates, n=n, cutoff=cutoff)
    if close or "." not in name:
        return close
    tails = {c.rsplit(".", 1)[-1]: c for c in candidates}
    tail_close = difflib.get_close_matches(name.rsplit(".", 1)[-1], list(tails), n=n, cutoff=max(cutoff, TAIL_CUTOFF))
    return [tails[t] for t in tail_close]


def did_you_mean(name: str, candidates: Iterable[str], n: int = 1, cutoff: float = 0.6) -> str:
    """`did you mean x?` (`did you mean a, b?` for several), or "" when no candidate is close."""
    close = closest(name, candidates, n, cutoff)
    return f"did you mean {', '.join(close)}?" if close else ""
