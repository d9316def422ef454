"""The suite's own grouping works: `make test` runs pytest-xdist with `--dist loadgroup`, and tests/conftest.py puts
the tests that share a session- or module-scoped fixture (a PostgreSQL server, a module's trained runs, a browser and
its folders) into one group so that the fixture is made once. pytest 9.2.0 names a test from a field that
pytest-xdist 3.8.0 does not set, so the groups were silently ignored and every worker made each fixture again (the
web page tests' folders three times, 20-30 s each). This runs a small suite of its own the way `make test` does."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import HANG

GROUPED = '''
import json, os
import pytest

def _note(request):
    with open(os.environ["SEEN_FILE"], "a") as f:
        f.write(json.dumps({"id": request.node.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER")}) + "\\n")

@pytest.mark.xdist_group("shared")
@pytest.mark.parametrize("n", range(4))
def test_grouped(n, request):
    _note(request)

@pytest.mark.parametrize("n", range(4))
def test_free(n, request):
    _note(request)
'''


def test_tests_of_one_xdist_group_run_on_one_worker(tmp_path):
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_grouped.py").write_text(GROUPED)
    seen_file = tmp_path / "seen.jsonl"
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-p", "no:cacheprovider",
                           "-q", f"--basetemp={tmp_path / 'base'}", str(suite)], cwd=suite, capture_output=True,
                          text=True, timeout=HANG, env=dict(os.environ, SEEN_FILE=str(seen_file)))
    assert done.returncode == 0, done.stdout + done.stderr
    seen = [json.loads(line) for line in seen_file.read_text().splitlines()]
    grouped = [s for s in seen if "::test_grouped[" in s["id"]]
    assert len(grouped) == 4 and len(seen) == 8, seen
    assert all(s["id"].endswith("@shared") for s in grouped), f"the group is not in the test ids: {grouped}"
    assert len({s["worker"] for s in grouped}) == 1, f"one group ran on several workers: {grouped}"
