"""`OptsError`: the opts (or a file or a `--set` item they come from) are unusable; one line per problem, each
naming where it is. Its own module, below every reader, so that the readers of user input can raise it."""
from __future__ import annotations

from playground.processes.exit_codes import UserError


class OptsError(UserError, ValueError):
    """The opts are unusable; `problems` holds one line per problem, each naming where it is."""

    heading = "problems in the opts"

    def __init__(self, problems: list[str] | str) -> None:
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))

    def __str__(self) -> str:
        if len(self.problems) == 1:
            return self.problems[0]
        return f"{len(self.problems)} {self.heading}:\n" + "\n".join(f"  - {p}" for p in self.problems)
