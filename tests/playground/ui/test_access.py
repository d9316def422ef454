"""`playground ui` is safe by default, checked over HTTP against the real server process: only files under the
served folders are served (every escape is 404), nothing in the folders is written or run, another address needs
the token, the buttons need --allow-actions and the server's own pages, and a stop signal ends it cleanly."""
from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from playground.processes.exit_codes import EXIT_USAGE
from tests.playground.ui.browser import UiProcess

pytestmark = pytest.mark.skipif(__import__("importlib").util.find_spec("plotly") is None,
                                reason="the `ui` extra is not installed (pip install 'playground[ui]')")


def request(url: str, path: str, method: str = "GET", headers: dict | None = None, body: bytes | None = None,
            host: str | None = None) -> tuple[int, dict, bytes]:
    """(status, headers, body) of one request to the server at `url` (its Host header: `host`, else its own)."""
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        connection.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        connection.putheader("Host", host or parts.netloc)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.putheader("Content-Length", str(len(body or b"")))
        connection.endheaders(body)
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A served folder holding a run folder (its files as a run leaves them), and beside it, outside, a secret."""
    root = tmp_path_factory.mktemp("ui-access")
    served, run = root / "served", root / "served" / "run"
    run.mkdir(parents=True)
    (run / "opts.json").write_text(json.dumps({"opts": {"output": {"metrics": []}}}))
    (run / "metrics.jsonl").write_text('{"index": 0, "kind": "epoch", "epochs": 1.0, "test_loss": NaN}\n')
    (run / "train.log").write_text("a line\n")
    (run / "page.html").write_text("<script>alert(1)</script>")
    (run / "model.pt").write_bytes(b"not unpickled")
    (root / "secret.txt").write_text("secret")
    outside = root / "outside_run"
    outside.mkdir()
    (outside / "opts.json").write_text("{}")
    (run / "link").symlink_to(root)                      # a link that leads out of the served folder
    return served, root


@pytest.fixture(scope="module")
def ui(folders):
    served, _ = folders
    process = UiProcess([served])
    yield process
    assert process.stop() == 0


def tree(folder: Path) -> dict[str, tuple]:
    return {str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(folder.rglob("*"))
            if not p.is_symlink()}


def test_paths_that_escape_the_served_folders_are_404(ui, folders):
    assert request(ui.base, "/files/0/run/train.log")[0] == 200                     # what is inside is served
    for path in ("/files/0/../secret.txt", "/files/0/run/../../secret.txt", "/files/0/%2e%2e/secret.txt",
                 "/files/0/run/link/secret.txt", "/files/0//etc/passwd", "/files/0/%2Fetc%2Fpasswd",
                 "/files/1/secret.txt", "/files/x/secret.txt", "/files/0/run/%00", "/static/../web/server.py",
                 "/static/%2e%2e/web/server.py", "/api/run?key=0/../outside_run", "/api/run?key=0/run/link/outside_run",
                 "/api/sweep?key=0/run", "/api/compare?keys=0/run,0/../outside_run", "/nothing"):
        status, _, body = request(ui.base, path)
        assert status == 404, (path, status, body)
        assert b"secret" not in body


def test_a_files_content_is_never_served_as_a_page_or_unpickled(ui):
    status, headers, body = request(ui.base, "/files/0/run/page.html")
    assert status == 200 and headers["content-type"] == "application/octet-stream"
    assert headers["content-disposition"].startswith("attachment") and headers["x-content-type-options"] == "nosniff"
    assert "script-src 'self'" in headers["content-security-policy"]
    status, headers, body = request(ui.base, "/files/0/run/model.pt")
    assert body == b"not unpickled" and headers["content-type"] == "application/octet-stream"
    status, _, body = request(ui.base, "/api/run?key=0/run")
    assert status == 200 and json.loads(body)["records"][0]["test_loss"] is None   # NaN, as JSON can say it


def test_serving_writes_nothing_into_the_folders(ui, folders):
    served, _ = folders
    before = tree(served)
    for path in ("/", "/api/list", "/api/run?key=0/run", "/files/0/run/train.log", "/api/compare?keys=0/run,0/run"):
        assert request(ui.base, path)[0] == 200, path
    assert tree(served) == before


def test_on_loopback_a_request_naming_another_host_is_refused(ui):
    assert request(ui.base, "/api/list")[0] == 200
    assert request(ui.base, "/api/list", host="localhost")[0] == 200
    assert request(ui.base, "/api/list", host="attacker.example:80")[0] == 403      # DNS rebinding


def test_actions_are_refused_unless_allowed(ui):
    status, _, body = request(ui.base, "/api/action", "POST", {"Content-Type": "application/json"},
                              json.dumps({"action": "stop", "key": "0/run"}).encode())
    assert status == 403 and "--allow-actions" in json.loads(body)["message"]


def test_with_actions_a_post_from_another_site_is_refused(folders):
    served, _ = folders
    ui = UiProcess([served], "--allow-actions")
    try:
        body = json.dumps({"action": "pause", "key": "0/run"}).encode()
        status, _, _ = request(ui.base, "/api/action", "POST", {"Origin": "http://attacker.example"}, body)
        assert status == 403
        status, _, answer = request(ui.base, "/api/action", "POST", {"Origin": ui.base}, body)
        assert status == 409 and "not a sweep folder" in json.loads(answer)["message"]
    finally:
        assert ui.stop() == 0


def test_another_address_needs_the_token_it_prints(folders):
    served, _ = folders
    ui = UiProcess([served], "--host", "0.0.0.0")
    try:
        token = ui.url.split("?token=", 1)[1]
        local = f"http://127.0.0.1:{urlsplit(ui.base).port}"
        assert len(token) >= 24
        assert request(local, "/api/list")[0] == 403
        assert request(local, "/api/list?token=wrong")[0] == 403
        assert request(local, "/api/list", headers={"Authorization": f"Bearer {token}"})[0] == 200
        status, headers, _ = request(local, f"/?token={token}")
        assert status == 303 and headers["location"] == "/"
        cookie = headers["set-cookie"].split(";")[0]
        assert "HttpOnly" in headers["set-cookie"] and "SameSite=Strict" in headers["set-cookie"]
        assert request(local, "/api/list", headers={"Cookie": cookie})[0] == 200
        assert request(local, "/files/0/run/train.log", headers={"Cookie": cookie})[0] == 200
    finally:
        assert ui.stop() == 0


def test_a_missing_folder_is_a_usage_error_before_anything_starts(tmp_path):
    done = subprocess.run([sys.executable, "-m", "playground", "ui", str(tmp_path / "nowhere"), "--port", "0"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert done.returncode == EXIT_USAGE
    assert done.stderr.strip() == f"playground: error: {tmp_path / 'nowhere'}: no such folder (give folders that " \
                                  "hold run folders or sweep folders)"
