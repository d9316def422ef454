"""Children's stdout and stderr copied to this process's own as they come, to a log too if the caller gives one,
and scanned for the first text a `scan` function recognises (a restart policy's out-of-memory line).

One thread per stream reads it to its end (the child's end, or its last descendant's that holds the pipe). One
child's text passes as it comes, partial lines included; with `whole_lines` (several children) only whole lines go
out, each with its child's prefix, so two children's lines never mix. Writes, to the terminal and the log, take
one lock. The scan sees each piece of text with the CARRY characters before it, so a pattern a read cut in two
still matches. Used by child_group.py.
"""
from __future__ import annotations

import codecs
import os
import sys
import threading
from typing import IO, Any, Callable

CARRY = 4096   # characters kept between pieces of text, so a pattern cut in two by a read still matches


class OutputTee:
    """The output of the children `follow`ed since the last `join`; `scan(text)` returns a match or None."""

    def __init__(self, scan: Callable[[str], Any] | None = None, whole_lines: bool = False) -> None:
        self.scan, self.whole_lines = scan, whole_lines
        self.found: Any = None
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def follow(self, stdout: IO[bytes], stderr: IO[bytes], prefix: str = "",
               log: Callable[[str], None] | None = None) -> None:
        """Copy a child's two pipes, each to this process's same stream and to `log(text)`, until they close.
        `prefix` starts each of its lines (with whole_lines only)."""
        for stream, out in ((stdout, sys.stdout), (stderr, sys.stderr)):
            thread = threading.Thread(target=self._pump, args=(stream, out, prefix, log), daemon=True)
            thread.start()
            self._threads.append(thread)

    def join(self) -> Any:
        """Wait until every followed pipe has closed; the first match of the scan (None: none), then forget both."""
        for thread in self._threads:
            thread.join()
        found, self.found, self._threads = self.found, None, []
        return found

    def _pump(self, stream: IO[bytes], out: IO[str], prefix: str, log: Callable[[str], None] | None) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        carry = held = ""
        with stream:
            while chunk := os.read(stream.fileno(), 65536):
                text = held + decoder.decode(chunk)
                if self.whole_lines:    # the partial line waits for its end
                    cut = text.rfind("\n") + 1
                    text, held = text[:cut], text[cut:]
                if text:
                    carry = self._emit(text, out, prefix, log, carry)
            text = held + decoder.decode(b"", final=True)
            if text:
                self._emit(text, out, prefix, log, carry)

    def _emit(self, text: str, out: IO[str], prefix: str, log: Callable[[str], None] | None, carry: str) -> str:
        if self.whole_lines and prefix:
            text = _prefixed(text, prefix)
        with self._lock:
            out.write(text)
            out.flush()
            if log is not None:
                log(text)
        if self.scan is not None and self.found is None:
            match = self.scan(carry + text)
            if match is not None:
                with self._lock:
                    if self.found is None:
                        self.found = match
        return (carry + text)[-CARRY:]


def _prefixed(text: str, prefix: str) -> str:
    """`prefix` before each line of `text` (lines end with "\\n"; the last one may not)."""
    lines = text.split("\n")
    last = lines.pop()
    return "".join(f"{prefix}{line}\n" for line in lines) + (prefix + last if last else "")
