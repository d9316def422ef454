"""`SweepError`: a sweep that cannot start (bad spec, upf, restart file, opts keys); the command exits 2."""
from __future__ import annotations


class SweepError(ValueError):
    """One message per problem, each naming the file and the place in it."""

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))

    def __str__(self) -> str:
        if len(self.problems) == 1:
            return self.problems[0]
        return f"{len(self.problems)} problems:\n" + "\n".join(f"  - {p}" for p in self.problems)
