"""What the `playground ui` tests run: `playground ui` itself as a real process, and Debian's Chromium
(/usr/bin/chromium, installed by .ci/run) driven headless by Playwright, never a browser Playwright downloads.

`skip_reason()` says why the browser tests cannot run here (no Playwright, no Chromium, no plotly); `shot()` saves
a screenshot under the test's folder, and also into PLAYGROUND_UI_SCREENSHOTS when it names a folder (docs/ui/ is
made so: docs/ui.md).
"""
from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}
START_SECONDS = 60.0     # only turns a server that never says its address into a failure


def skip_reason() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
        import plotly  # noqa: F401
    except ImportError as err:
        return f"the `ui` extra is not installed ({err.name}): pip install 'playground[ui]'"
    if not os.access(CHROMIUM, os.X_OK):
        return f"no browser: {CHROMIUM} is missing (Debian's chromium package, which .ci/run installs)"
    return None


@contextlib.contextmanager
def chromium(profile: Path) -> Iterator[object]:
    """A Playwright browser context of headless Chromium with a fresh user-data folder."""
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, args=FLAGS, headless=True, viewport=VIEWPORT)
        try:
            yield context
        finally:
            context.close()


class UiProcess:
    """`playground ui FOLDERS --port 0 EXTRA...` as a real process; `url` is the address it printed."""

    def __init__(self, folders: list, *extra: str, cwd: str | None = None) -> None:
        command = [sys.executable, "-m", "playground", "ui", *map(str, folders), "--port", "0", *extra]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
                                        env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.lines: list[str] = []
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and self.process.poll() is None:
            ready, _, _ = select.select([self.process.stdout], [], [], 0.5)
            if ready:
                line = self.process.stdout.readline()
                self.lines.append(line)
                if " at http://" in line:
                    self.url = line.split(" at ", 1)[1].strip()
                    self.base = self.url.split("?", 1)[0].rstrip("/")
                    return
        self.process.kill()
        raise AssertionError(f"playground ui said no address: {self.lines} {self.process.stderr.read()}")

    def stop(self) -> int:
        """SIGTERM; its exit code (0: it stops cleanly on a stop signal)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        finally:
            self.process.stdout.close()
            self.process.stderr.close()


def shot(page, tmp_path: Path, name: str, docs: bool = True) -> Path:
    """A screenshot of what the page shows now, as tmp_path/NAME.png; with `docs`, also (small: 64 colours) in the
    folder PLAYGROUND_UI_SCREENSHOTS names, when it names one."""
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    folder = os.environ.get("PLAYGROUND_UI_SCREENSHOTS")
    if docs and folder:
        from PIL import Image
        os.makedirs(folder, exist_ok=True)
        with Image.open(path) as image:
            image.convert("RGB").quantize(colors=64).save(os.path.join(folder, f"{name}.png"), optimize=True)
    return path
