"""The HTTP server of `playground ui` (the standard library's ThreadingHTTPServer): the page and its scripts
(package data, playground/ui/static/), plotly.js from the installed `plotly` package, the JSON of api.py, and
files under the served folders (/files/KEY: a plot, metrics.jsonl, a checkpoint to download).

Every answer forbids the browser to guess types or run anything but the server's own scripts (Content-Security-
Policy), and a file from a run folder is sent as an image, plain text, JSON or a download, never as a page: no
file's content is executed or unpickled, here or in the browser. Access rules: access.py.
"""
from __future__ import annotations

import gzip
import importlib.util
import json
import os
import shutil
import socket
import sys
import traceback
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, unquote, urlsplit

from playground.processes.exit_codes import UserError
from playground.ui.files.roots import Roots
from playground.ui.web.access import Access
from playground.ui.web.actions import ActionRefused, act
from playground.ui.web.api import Api, Encoded, NotFound, encode
from playground.ui.web.catalog import Catalog

STATIC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "static")
STATIC_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                ".css": "text/css; charset=utf-8", ".png": "image/png"}
FILE_TYPES = {".png": "image/png", ".json": "application/json", ".jsonl": "text/plain; charset=utf-8",
              ".log": "text/plain; charset=utf-8", ".txt": "text/plain; charset=utf-8",
              ".csv": "text/plain; charset=utf-8", ".md": "text/plain; charset=utf-8"}
POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; "
          "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'")
MAX_BODY = 4096


def plotly_js() -> str:
    """The path of plotly.min.js in the installed `plotly` package (the `ui` extra), or UserError."""
    found = importlib.util.find_spec("plotly")
    path = os.path.join(os.path.dirname(found.origin), "package_data", "plotly.min.js") if found and found.origin \
        else None
    if path is None or not os.path.isfile(path):
        raise UserError("playground ui draws its charts with plotly.js from the `plotly` package, which is not "
                        "installed: pip install 'playground[ui]'")
    return path


class UiServer:
    def __init__(self, folders: list[str], host: str, port: int, token: str | None, allow_actions: bool) -> None:
        self.catalog = Catalog(Roots(folders))
        self.api = Api(self.catalog, allow_actions)
        self.allow_actions = allow_actions
        self.plotly = plotly_js()
        self._plotly_gzip: bytes | None = None
        self.static = {name: os.path.join(STATIC, name) for name in os.listdir(STATIC)
                       if os.path.splitext(name)[1] in STATIC_TYPES}
        server_class = _Ipv6Server if ":" in host else ThreadingHTTPServer
        self.httpd = server_class((host, port), _handler(self))
        self.httpd.daemon_threads = True
        self.access = Access(host, self.httpd.server_address[1], token)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def plotly_gzip(self) -> bytes:
        if self._plotly_gzip is None:
            with open(self.plotly, "rb") as handle:
                self._plotly_gzip = gzip.compress(handle.read(), compresslevel=6)
        return self._plotly_gzip

    def routes(self) -> dict[str, Callable[[dict[str, str]], dict[str, Any]]]:
        return {"/api/list": self.api.listing, "/api/run": self.api.run, "/api/sweep": self.api.sweep,
                "/api/curves": self.api.curves, "/api/importances": self.api.importances,
                "/api/compare": self.api.compare}


class _Ipv6Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6      # --host ::1, --host ::


def _handler(server: UiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "playground-ui"

        def log_message(self, format: str, *args: Any) -> None:   # noqa: A002  quiet: one line per poll is noise
            return

        def do_GET(self) -> None:   # noqa: N802
            try:
                self._get()
            except (BrokenPipeError, ConnectionResetError):
                return
            except Exception:       # noqa: BLE001  a bug answers 500 and is printed; the server goes on
                traceback.print_exc(file=sys.stderr)
                self._text(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error: see the server's terminal")

        def do_POST(self) -> None:  # noqa: N802
            try:
                self._post()
            except (BrokenPipeError, ConnectionResetError):
                return
            except Exception:       # noqa: BLE001
                traceback.print_exc(file=sys.stderr)
                self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"ok": False, "message": "internal error"})

        def _query(self) -> tuple[str, dict[str, str]]:
            parts = urlsplit(self.path)
            return parts.path, {k: v[0] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}

        def _get(self) -> None:
            path, query = self._query()
            if not server.access.allowed(self.headers, query.get("token")):
                self._text(HTTPStatus.FORBIDDEN, "this server needs its token: open the address `playground ui` "
                                                 "printed (it ends with ?token=...)")
                return
            if "token" in query and server.access.token is not None:
                self.send_response(HTTPStatus.SEE_OTHER)
                self.send_header("Location", path)
                self.send_header("Set-Cookie", server.access.set_cookie())
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            handler = server.routes().get(path)
            if handler is not None:
                try:
                    self._json(HTTPStatus.OK, handler(query))
                except NotFound as err:
                    self._json(HTTPStatus.NOT_FOUND, {"error": str(err)})
            elif path == "/":
                self._static("index.html")
            elif path.startswith("/static/"):
                self._static(path[len("/static/"):])
            elif path == "/plotly.min.js":
                self._plotly()
            elif path.startswith("/files/"):
                self._file(path[len("/files/"):])
            else:
                self._text(HTTPStatus.NOT_FOUND, "not found")

        def _post(self) -> None:
            path, query = self._query()
            if not server.access.allowed(self.headers, None) or not server.access.same_origin(self.headers):
                self._json(HTTPStatus.FORBIDDEN, {"ok": False, "message": "refused: not from this server's pages"})
                return
            if path != "/api/action":
                self._json(HTTPStatus.NOT_FOUND, {"ok": False, "message": "not found"})
                return
            if not server.allow_actions:
                self._json(HTTPStatus.FORBIDDEN, {"ok": False, "message": "actions are off: start `playground ui` "
                                                                          "with --allow-actions"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(min(length, MAX_BODY)) or b"{}") if length <= MAX_BODY else None
            except ValueError:
                body = None
            if not isinstance(body, dict) or not isinstance(body.get("key"), str):
                self._json(HTTPStatus.BAD_REQUEST, {"ok": False, "message": "expected {action, key}"})
                return
            target = server.catalog.roots.resolve(body["key"])
            if target is None:
                self._json(HTTPStatus.NOT_FOUND, {"ok": False, "message": "no such folder"})
                return
            try:
                said = act(server.catalog, str(body.get("action")), target)
                self._json(HTTPStatus.OK, {"ok": True, "message": said})
            except ActionRefused as err:
                self._json(HTTPStatus.CONFLICT, {"ok": False, "message": str(err)})

        def _static(self, name: str) -> None:
            path = server.static.get(name)
            if path is None:
                self._text(HTTPStatus.NOT_FOUND, "not found")
                return
            status = os.stat(path)
            tag = f'"{status.st_mtime_ns:x}-{status.st_size:x}"'
            if self.headers.get("If-None-Match") == tag:       # the browser's copy is current: no body
                self._head(HTTPStatus.NOT_MODIFIED, 0, STATIC_TYPES[os.path.splitext(name)[1]], "no-cache",
                           {"ETag": tag})
                return
            with open(path, "rb") as handle:
                self._send(HTTPStatus.OK, handle.read(), STATIC_TYPES[os.path.splitext(name)[1]], "no-cache",
                           {"ETag": tag})

        def _plotly(self) -> None:
            if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                self._send(HTTPStatus.OK, server.plotly_gzip(), "text/javascript; charset=utf-8", "max-age=86400",
                           {"Content-Encoding": "gzip"})
                return
            with open(server.plotly, "rb") as handle:
                self._send(HTTPStatus.OK, handle.read(), "text/javascript; charset=utf-8", "max-age=86400")

        def _file(self, key: str) -> None:
            path = server.catalog.roots.resolve(unquote(key))
            if path is None or not os.path.isfile(path):
                self._text(HTTPStatus.NOT_FOUND, "not found")
                return
            kind = FILE_TYPES.get(os.path.splitext(path)[1].lower())
            extra = {} if kind else {"Content-Disposition": f'attachment; filename="{_ascii(os.path.basename(path))}"'}
            with open(path, "rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                self._head(HTTPStatus.OK, size, kind or "application/octet-stream", "no-cache", extra)
                shutil.copyfileobj(handle, self.wfile, 1 << 20)

        def _json(self, status: HTTPStatus, payload: Any) -> None:
            body = encode({k: v for k, v in payload.items() if not isinstance(v, Encoded)})
            for name, text in ((k, v) for k, v in payload.items() if isinstance(v, Encoded)):
                body = f"{body[:-1]}{',' if body != '{}' else ''}{json.dumps(name)}:{text}}}"
            self._send(status, body.encode(), "application/json", "no-store")

        def _text(self, status: HTTPStatus, text: str) -> None:
            self._send(status, (text + "\n").encode(), "text/plain; charset=utf-8", "no-store")

        def _send(self, status: HTTPStatus, body: bytes, kind: str, cache: str,
                  extra: dict[str, str] | None = None) -> None:
            self._head(status, len(body), kind, cache, extra)
            self.wfile.write(body)

        def _head(self, status: HTTPStatus, length: int, kind: str, cache: str,
                  extra: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(length))
            self.send_header("Cache-Control", cache)
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Content-Security-Policy", POLICY)
            self.send_header("Referrer-Policy", "no-referrer")
            for name, value in (extra or {}).items():
                self.send_header(name, value)
            self.end_headers()

    return Handler


def _ascii(name: str) -> str:
    return "".join(c if c.isascii() and c.isprintable() and c not in '"\\' else "_" for c in name)
