"""A local OAuth2 token endpoint (stdlib HTTP server on 127.0.0.1) for the exchange tests."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs


class FakeTokenServer:
    """Accepts the codes in ``valid_codes`` and refresh tokens in ``valid_refresh_tokens``.

    Each accepted grant mints ``access-<n>`` (and ``refresh-<n>``); every request's form is
    recorded in ``requests``.
    """

    def __init__(self, *, expires_in: int = 3600) -> None:
        self.valid_codes: set[str] = set()
        self.valid_refresh_tokens: set[str] = set()
        self.requests: list[dict[str, str]] = []
        self.expires_in = expires_in
        self._minted = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("Content-Length", "0"))
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                status, body = server.answer(form)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.token_uri = f"http://127.0.0.1:{self._httpd.server_port}/token"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def answer(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        self.requests.append(form)
        if form.get("client_secret") != "s3cret":
            return 401, {"error": "invalid_client"}
        grant = form.get("grant_type")
        if grant == "authorization_code" and form.get("code") in self.valid_codes:
            self.valid_codes.discard(form["code"])  # codes are single-use
        elif grant == "refresh_token" and form.get("refresh_token") in self.valid_refresh_tokens:
            pass
        else:
            return 400, {"error": "invalid_grant", "error_description": "bad code or token"}
        self._minted += 1
        refresh = f"refresh-{self._minted}"
        self.valid_refresh_tokens.add(refresh)
        return 200, {
            "access_token": f"access-{self._minted}",
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "refresh_token": refresh,
        }

    def __enter__(self) -> FakeTokenServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()
