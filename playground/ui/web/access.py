"""Who may read the pages: safe by default.

On the loopback address (the default, 127.0.0.1) only this machine reaches the server, and a request must name
it in its Host header (a page of another site that renamed itself to 127.0.0.1, DNS rebinding, is refused). On any
other address a token is required (`--token`, or one generated and printed): the first request brings it in the
URL (`?token=...`), the answer sets it as a cookie for this port (HttpOnly, SameSite=Strict) and later requests
carry that, or an `Authorization: Bearer` header. A request that changes something (POST) must also come from
the server's own pages (its Origin header, when sent, names the server).
"""
from __future__ import annotations

import hmac
import ipaddress
import secrets
from http.cookies import CookieError, SimpleCookie
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def new_token() -> str:
    return secrets.token_urlsafe(24)


class Access:
    def __init__(self, host: str, port: int, token: str | None) -> None:
        self.host, self.port, self.token = host, port, token
        self.cookie = f"playground_ui_{port}"

    def _host_name(self, header: str | None) -> str:
        return urlsplit(f"//{header or ''}").hostname or ""

    def allowed(self, headers, query_token: str | None) -> bool:
        """Whether a request with these headers (and `token` query parameter) may be answered."""
        if self.token is None:
            return is_loopback(self._host_name(headers.get("Host")))
        for given in (query_token, self._cookie_token(headers), _bearer(headers.get("Authorization"))):
            if given is not None and hmac.compare_digest(given.encode(), self.token.encode()):
                return True
        return False

    def same_origin(self, headers) -> bool:
        """A POST's Origin, when the browser sends one, names this server (as its Host header does)."""
        origin = headers.get("Origin")
        return origin is None or urlsplit(origin).netloc == (headers.get("Host") or "")

    def set_cookie(self) -> str:
        """The Set-Cookie value that keeps the token for the pages' later requests."""
        return f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"

    def _cookie_token(self, headers) -> str | None:
        text = headers.get("Cookie")
        if not text:
            return None
        jar = SimpleCookie()
        try:
            jar.load(text)
        except CookieError:
            return None
        return jar[self.cookie].value if self.cookie in jar else None


def _bearer(header: str | None) -> str | None:
    if header and header.startswith("Bearer "):
        return header[len("Bearer "):].strip()
    return None
