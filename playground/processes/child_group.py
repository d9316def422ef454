"""The one supervising loop: a group of children started together (the ranks of a run, the attempt of a restarted
run, the ranks of a Determined entrypoint), run again while the caller says so, with this process's stop signals
passed on to them, their output teed and scanned, and waited for with a grace after the first failure.

The caller keeps what is its own: what one attempt starts and which attempt it is (`run(attempt)` calls it until
it returns a result), and what the exits mean (`Ending` reports them, `stops` says whether a stop was asked).
Starting, signalling, stopping and reading a child are supervisor.py's; copying and scanning output is
output_tee.py's.

- forward: while `run` runs, SIGTERM/SIGINT to this process (one held since its start included) send SIGTERM to
  each child that runs, and to each started afterwards; with `kill_on_second_stop`, a second one sends SIGKILL.
- tee and scan: a command started with `start` has its stdout and stderr copied here (and to the caller's log);
  ranks `add`ed share this process's terminal.
- wait: `wait` returns once every child has ended; after the first to end with a code not in `tolerated`, the
  others get `grace` seconds (supervisor.GRACE_SECONDS) to end on their own, then are stopped (they hung).
"""
from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, TypeVar

from playground.processes import supervisor
from playground.processes.exit_codes import EXIT_DONE
from playground.processes.output_tee import OutputTee

Result = TypeVar("Result")


@dataclass
class Ending:
    """How an attempt's children ended: `exits` (index, returncode) in the order they ended (the first to fail on
    its own comes first), `stopped` the indices stopped as hung, `found` the first match of the scan in their
    output (None: none), `children` by index (as started)."""
    children: list[supervisor.Child]
    exits: list[tuple[int, int]]
    stopped: set[int] = field(default_factory=set)
    found: Any = None

    @property
    def codes(self) -> list[int]:
        """Each child's returncode, by index."""
        by_index = dict(self.exits)
        return [by_index[index] for index in range(len(self.children))]


class ChildGroup:
    """Children supervised together, one attempt after another; see the module doc."""

    def __init__(self, scan: Callable[[str], Any] | None = None, tolerated: Iterable[int] = (EXIT_DONE,),
                 kill_on_second_stop: bool = False, whole_lines: bool = False,
                 grace: float = supervisor.GRACE_SECONDS) -> None:
        self.tolerated, self.grace = tuple(tolerated), grace
        self.kill_on_second_stop = kill_on_second_stop
        self.stops = 0            # stop signals this process got while `run` ran
        self.children: list[supervisor.Child] = []
        self._tee = OutputTee(scan, whole_lines)

    def run(self, attempt: Callable[["ChildGroup"], Result | None]) -> Result:
        """attempt(self) again and again while it returns None; its first other result. Meanwhile this process's
        stop signals are passed on to the children (the handlers before are back afterwards)."""
        with supervisor.stop_signals_call(self.forward):
            while True:
                result = attempt(self)
                if result is not None:
                    return result

    def forward(self, _signum: int) -> None:
        """A stop signal came: SIGTERM to every child that runs (the second with kill_on_second_stop: SIGKILL).
        Only signals are sent: this runs as a signal handler, maybe inside `wait`'s own poll of a child, so
        waiting for a child here would wait for a lock that poll holds. `wait` reaps."""
        self.stops += 1
        sig = signal.SIGKILL if self.kill_on_second_stop and self.stops > 1 else signal.SIGTERM
        for child in self.children:
            supervisor.signal_child(child, sig)

    def start(self, command: list[str], prefix: str = "", log: Callable[[str], None] | None = None,
              holds_stop: bool = False, **popen: Any) -> subprocess.Popen:
        """Start `command` (supervisor.start_child; OSError when it cannot be) with its output teed: `prefix`
        before each of its lines, `log(text)` given each piece of it. A stop asked already is passed on to it."""
        child = supervisor.start_child(command, holds_stop=holds_stop, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, **popen)
        self._adopt(child)
        self._tee.follow(child.stdout, child.stderr, prefix, log)
        return child

    def add(self, children: Iterable[supervisor.Child]) -> None:
        """Supervise children started elsewhere (supervisor.start_ranks); their output is not teed."""
        for child in children:
            self._adopt(child)

    def _adopt(self, child: supervisor.Child) -> None:
        self.children.append(child)
        if self.stops:     # a stop that came while the group started
            supervisor.signal_child(child)

    def wait(self) -> Ending:
        """Wait for every child, as the module doc says, and for the end of their output; how they ended. The
        group is then empty, for the next attempt."""
        children = self.children    # signalled by `forward` until they have ended
        try:
            exits, stopped = supervisor.wait_for_children(children, self.grace, self.tolerated)
        finally:
            self.children = []
        return Ending(children, exits, stopped, self._tee.join())

    def abandon(self) -> None:
        """Stop the children started so far (an attempt that cannot go on), and forget them and their output."""
        try:
            supervisor.stop(self.children, self.grace)
        finally:
            self.children = []
        self._tee.join()
