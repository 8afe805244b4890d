"""A local HTTP server that speaks model providers' wire protocols, for connector tests.

The real SDK clients (openai, anthropic, google-genai, litellm) are pointed at it through
their base URL. Each test queues the replies the server gives, in order, and reads back the
requests it received (method, path, headers, JSON body) to compare with golden JSON.
Replies are JSON bodies, SSE streams (sent with chunked encoding, so a cut stream is a
detectable protocol error), error statuses, or streams that break off mid-way.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "FakeProviderServer",
    "RecordedRequest",
    "Reply",
    "anthropic_sse",
    "chat_sse",
    "gemini_sse",
    "responses_sse",
]


@dataclass(kw_only=True)
class Reply:
    """One scripted answer.

    Attributes:
        status: the HTTP status.
        body: a JSON body (for non-streaming answers and errors).
        sse: raw SSE text, sent in ``sse_pieces`` chunks of chunked encoding.
        headers: extra response headers (e.g. ``retry-after``).
        cut: stop after sending the SSE text without finishing the chunked body, as a
            dropped connection does.
        hold: wait for this event before answering (to make the client time out).
    """

    status: int = 200
    body: Any = None
    sse: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    cut: bool = False
    hold: threading.Event | None = None


@dataclass(kw_only=True)
class RecordedRequest:
    """A request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


class FakeProviderServer:
    """A threaded HTTP server on 127.0.0.1 with a queue of scripted replies."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        # Answers a request the emulated server would refuse (see openai_dialects.py),
        # before any scripted reply is used.
        self.check: Callable[[RecordedRequest], Reply | None] | None = None
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._handle()

            def do_POST(self) -> None:
                self._handle()

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                request = RecordedRequest(
                    method=self.command,
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                with server._lock:
                    server.requests.append(request)
                    reply = server.check(request) if server.check is not None else None
                    if reply is None:
                        reply = server._replies.popleft() if server._replies else None
                if reply is None:
                    reply = Reply(status=500, body={"error": {"message": "no reply scripted"}})
                self._send(reply)

            def _send(self, reply: Reply) -> None:
                if reply.hold is not None:
                    reply.hold.wait(timeout=30)
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("connection", "close")
                if reply.sse is None:
                    payload = json.dumps(reply.body if reply.body is not None else {}).encode()
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_header("content-type", "text/event-stream")
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for frame in reply.sse.split("\n\n"):
                    if not frame.strip():
                        continue
                    data = (frame + "\n\n").encode()
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()
                if not reply.cut:
                    self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that timed out and hung up is expected in tests; stay quiet.
                pass

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def add(self, *replies: Reply) -> None:
        """Queue replies, answered in order."""
        with self._lock:
            self._replies.extend(replies)

    def start(self) -> FakeProviderServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies received, in order."""
        return [r.body for r in self.requests]


def chat_sse(chunks: list[dict[str, Any]], *, done: bool = True) -> str:
    """An OpenAI Chat Completions stream: ``data: {chunk}`` frames, then ``[DONE]``."""
    frames = [f"data: {json.dumps(c)}\n\n" for c in chunks]
    if done:
        frames.append("data: [DONE]\n\n")
    return "".join(frames)


def responses_sse(events: list[dict[str, Any]]) -> str:
    """An OpenAI Responses API stream: ``event: <type>`` plus ``data: {event}`` frames."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def anthropic_sse(events: list[dict[str, Any]]) -> str:
    """An Anthropic Messages stream: ``event: <type>`` plus ``data: {event}`` frames."""
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def gemini_sse(chunks: list[dict[str, Any]]) -> str:
    """A Gemini ``streamGenerateContent?alt=sse`` stream: one ``data:`` frame per chunk."""
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks)
