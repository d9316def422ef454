"""`playground sweep serve` as a test starts it: on 127.0.0.1 and a given port, returned once it listens."""
from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from tests.conftest import HANG

REPO = Path(__file__).resolve().parents[3]


def start_proxy(folder: Path, port: int) -> subprocess.Popen:
    proxy = subprocess.Popen([sys.executable, "-m", "playground", "sweep", "serve", str(folder), "--host", "127.0.0.1",
                              "--port", str(port)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proxy.stdout.readline()
    assert line == f"serving {folder / 'study.journal'} at grpc://127.0.0.1:{port}\n", line + proxy.stderr.read()
    return proxy


def stop_proxy(proxy: subprocess.Popen) -> None:
    """SIGTERM: the calls in flight are answered, then it exits 0."""
    if proxy.poll() is None:
        proxy.send_signal(signal.SIGCONT)
        proxy.send_signal(signal.SIGTERM)
        assert proxy.wait(timeout=HANG) == 0
