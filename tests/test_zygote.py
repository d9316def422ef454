"""tests/zygote.py: a command forked from the torch-loaded server behaves as `python SCRIPT` started fresh."""
from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests import zygote

PROBE = """
import atexit, json, os, signal, sys
atexit.register(lambda: print("atexit ran", flush=True))
print(json.dumps({"argv": sys.argv, "path0": sys.path[:2], "cwd": os.getcwd(), "name": __name__,
                  "env": os.environ.get("PROBE_VALUE"), "sigterm": str(signal.getsignal(signal.SIGTERM)),
                  "sigint": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
                  "dynamo": "torch._dynamo" in sys.modules}))
print("to stderr", file=sys.stderr)
if sys.argv[1:] == ["die"]:
    os.kill(os.getpid(), signal.SIGKILL)
sys.exit(int(sys.argv[1]))
"""


def test_a_forked_command_sees_what_a_fresh_interpreter_sees(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    extra = tmp_path / "extra"
    extra.mkdir()
    env = dict(os.environ, PROBE_VALUE="x", PYTHONPATH=str(extra), PYTHONUNBUFFERED="1")
    argv = [sys.executable, str(script), "3"]
    fresh = subprocess.run(argv, env=env, cwd=extra, capture_output=True, text=True, timeout=300)
    forked = zygote.run(argv, env=env, cwd=extra, capture_output=True, text=True, timeout=300)
    assert zygote.enabled() and zygote._forkable(argv, None)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr) \
        == (3, fresh.stdout, "to stderr\n")
    assert fresh.stdout.endswith("atexit ran\n")


def test_a_killed_command_reports_the_signal_and_its_process_group_is_its_own(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    process = zygote.start([sys.executable, str(script), "die"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, start_new_session=True)
    assert isinstance(process, zygote.ZygoteProcess)
    assert process.wait(timeout=300) == -signal.SIGKILL
    sleeper = zygote.start([sys.executable, "-m", "http.server", "--help"], stdout=subprocess.PIPE, text=True)
    out, _ = sleeper.communicate(timeout=300)
    assert sleeper.returncode == 0 and "usage" in out


def test_interpreter_options_get_a_fresh_interpreter_and_a_changed_startup_variable_a_server_of_its_own(tmp_path):
    assert not zygote._forkable([sys.executable, "-X", "importtime", "x.py"], None)
    assert not zygote._forkable([sys.executable, "x.py"], lambda: None)
    assert zygote._forkable([sys.executable, "x.py"], None) and zygote._forkable([sys.executable, "-m", "x"], None)
    script = tmp_path / "threads.py"
    script.write_text("import torch\nprint(torch.get_num_threads())\n")
    for count in ("1", "2", "1"):
        done = zygote.run([sys.executable, str(script)], env=dict(os.environ, OMP_NUM_THREADS=count),
                          capture_output=True, text=True, timeout=300)
        assert (done.returncode, done.stdout) == (0, f"{count}\n"), done.stderr
