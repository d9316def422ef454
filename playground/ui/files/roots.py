"""The folders `playground ui` serves, and the keys that name what lies under them in URLs.

A key is `<n>/<path under the n-th folder>` (`0/first`, `1/digits-lr/trials/t0003`; `0` is the folder itself).
`resolve` turns a key back into a path only when the real path (symbolic links followed) is inside that folder:
anything else, `..`, an absolute path or a link that leads out, resolves to None, which the server answers 404.
"""
from __future__ import annotations

import os


class Roots:
    def __init__(self, folders: list[str]) -> None:
        self.paths = [os.path.realpath(folder) for folder in folders]

    def key_of(self, path: str) -> str | None:
        """The key of `path` (under one of the folders), else None."""
        real = os.path.realpath(path)
        for index, root in enumerate(self.paths):
            if _inside(real, root):
                rest = os.path.relpath(real, root)
                return str(index) if rest == "." else f"{index}/{rest}"
        return None

    def resolve(self, key: str) -> str | None:
        """The real path a key names, or None when it names nothing inside the served folders."""
        index, _, rest = key.partition("/")
        if not index.isdigit() or int(index) >= len(self.paths) or "\x00" in rest or os.path.isabs(rest):
            return None
        root = self.paths[int(index)]
        real = os.path.realpath(os.path.join(root, rest))
        return real if _inside(real, root) and os.path.exists(real) else None

    def inside(self, path: str) -> bool:
        """Whether `path` (symbolic links followed) is under one of the served folders."""
        real = os.path.realpath(path)
        return any(_inside(real, root) for root in self.paths)


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)
