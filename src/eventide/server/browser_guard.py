"""``BrowserGuardMiddleware``: what keeps a web page the developer happens to visit from
driving a local, token-less server.

A server on 127.0.0.1 without ``--auth-token`` is reachable from every page the developer's
browser opens. Three checks close the ways in, all before a route runs:

- **Host** (DNS rebinding): a page on ``attacker.example`` whose name is made to resolve to
  127.0.0.1 sends ``Host: attacker.example``. Only loopback names, IP literals (a rebinding
  needs a name the attacker controls, never an address), the configured names and
  ``--allowed-host`` names are served.
- **Origin** (cross-site requests and websocket hijacking): a browser names the page that
  made a request in ``Origin``. A websocket handshake and every state-changing request
  (POST, PUT, PATCH, DELETE) whose ``Origin`` is neither this server nor a ``--cors`` origin
  is refused. Clients that are not browsers send no ``Origin`` and pass.
- **Content type** (CSRF through forms): a ``<form>`` can post ``text/plain`` cross-site
  without a preflight; the API's bodies are JSON, so a state-changing request with a body
  must say ``application/json`` (or ``+json``).

It also bounds how long a client may take to send its body (``body_timeout``): a client
that opens a request and trickles it holds a connection and a route forever otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from collections.abc import Iterable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from eventide.server.asgi_answers import send_json_error

__all__ = ["DEFAULT_BODY_TIMEOUT", "LOOPBACK_HOSTS", "BrowserGuardMiddleware"]

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")
# Seconds allowed between two chunks of a request body.
DEFAULT_BODY_TIMEOUT = 30.0
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_JSON = b"application/json"
_SERVED_CACHE = 64


class _BodyTimedOut(Exception):
    pass


class BrowserGuardMiddleware:
    """Refuses foreign Hosts, foreign Origins on writes and websockets, non-JSON write
    bodies, and bodies sent too slowly (see the module's docstring for why each).

    Args:
        app: the wrapped ASGI app.
        allowed_hosts: host names served besides loopback names and IP literals (``"*"``:
            any, for a server behind a proxy that checks Host itself).
        allowed_origins: origins that may write and open websockets besides the server's
            own (the ``--cors`` origins; ``"*"``: any).
        body_timeout: seconds a client may take between two chunks of a request body
            before it gets a 408.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        allowed_hosts: Iterable[str] = (),
        allowed_origins: Iterable[str] = (),
        body_timeout: float = DEFAULT_BODY_TIMEOUT,
    ) -> None:
        self.app = app
        hosts = {host.lower().strip("[]") for host in allowed_hosts}
        self._any_host = "*" in hosts
        self._hosts = frozenset(hosts | set(LOOPBACK_HOSTS))
        origins = {origin.rstrip("/").lower() for origin in allowed_origins}
        self._any_origin = "*" in origins
        self._origins = frozenset(origins)
        self._body_timeout = body_timeout
        self._deadlines: _BodyDeadlines | None = None
        # Host headers already found served, as sent: one set lookup per request.
        self._served: set[bytes] = set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        # One dict built in C rather than a Python loop over the headers (a repeated header:
        # the last one counts, as the loop's last assignment did).
        headers: dict[bytes, bytes] = dict(scope["headers"])
        host = headers.get(b"host", b"")
        origin = headers.get(b"origin", b"")
        content_type = headers.get(b"content-type", b"")
        has_body = b"transfer-encoding" in headers or headers.get(b"content-length", b"0") not in (
            b"0",
            b"",
        )
        refusal = None if host in self._served else self._host_refusal(host)
        writes = kind == "websocket" or scope["method"] not in _SAFE_METHODS
        if refusal is None and writes and origin:
            refusal = self._origin_refusal(origin, host)
        if refusal is None and has_body and kind == "http" and writes and content_type != _JSON:
            refusal = _content_type_refusal(content_type)
        if refusal is not None:
            status, detail = refusal
            if kind == "websocket":  # before the handshake: the client sees a 403
                await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})
            else:
                await send_json_error(send, status, detail)
            return
        if kind == "websocket" or not has_body:
            await self.app(scope, receive, send)
            return
        # The body's timeout is set up here rather than in a method awaited from here: a
        # request runs its whole life inside this frame, and every coroutine between the
        # task and the route costs each resume of the task (callgrind, /run_sse turn).
        loop = asyncio.get_running_loop()
        deadlines = self._deadlines
        if deadlines is None or deadlines.loop is not loop:
            deadlines = self._deadlines = _BodyDeadlines(loop, self._body_timeout)
        try:
            await self.app(scope, _timed_receive(deadlines, receive), send)
        except _BodyTimedOut:
            with contextlib.suppress(RuntimeError):  # the route had started its answer
                await send_json_error(
                    send,
                    408,
                    f"The request body did not arrive within {self._body_timeout:g} seconds "
                    "of its last part; send the whole body at once.",
                )

    def _host_refusal(self, header: bytes) -> tuple[int, str] | None:
        if self._any_host or not header:
            return None  # HTTP/1.0 clients may send no Host; browsers always send one
        name = _host_name(header.decode("latin-1"))
        if name in self._hosts or name.endswith(".localhost") or _is_ip(name):
            if len(self._served) < _SERVED_CACHE:  # the few Host values clients send
                self._served.add(header)
            return None
        return (
            403,
            f"Host {name!r} is not served: this server answers to loopback names, IP "
            "addresses and the names it was started with (a page on another name that "
            "resolves here could otherwise read the API). To serve it under this name, "
            f"start it with --allowed-host {name} (create_app(allowed_hosts=[...])).",
        )

    def _origin_refusal(self, origin: bytes, host: bytes) -> tuple[int, str] | None:
        text = origin.decode("latin-1").rstrip("/").lower()
        if self._any_origin or text in self._origins:
            return None
        if text != "null" and text.partition("://")[2] == host.decode("latin-1").lower():
            return None  # same origin: the dev UI served by this server
        return (
            403,
            f"Origin {text!r} may not change anything here: a page from another site "
            "cannot write to this server or open its websocket. To allow that site, start "
            f"the server with --cors {text} (create_app(cors_origins=[...])).",
        )


def _timed_receive(deadlines: _BodyDeadlines, receive: Receive) -> Receive:
    """``receive``, each wait for a part of the body bounded by ``deadlines`` (a wait that
    times out raises ``_BodyTimedOut`` in the route, which the guard answers with a 408).

    ``send`` is not wrapped: every SSE frame goes through it, and a timeout can only fire
    before the body is whole, when routes have not answered.
    """
    waiting = deadlines.waiting
    body_done = False

    async def timed_receive() -> Message:
        nonlocal body_done
        if body_done:  # later receives wait for a disconnect, as long as a stream runs
            return await receive()
        task = asyncio.current_task()
        assert task is not None
        cancelling = task.cancelling()
        deadlines.start(task)
        try:
            message = await receive()
        except asyncio.CancelledError:
            if deadlines.expired.pop(task, False) and task.uncancel() <= cancelling:
                raise _BodyTimedOut from None
            raise
        finally:
            waiting.pop(task, None)
        body_done = not message.get("more_body", False)
        return message

    return timed_receive


class _BodyDeadlines:
    """The requests of one event loop waiting for a part of their body, each with its
    deadline, and one timer for them all.

    A timer per wait (``asyncio.timeout``) cost each request about 35k instructions; here
    a wait is two dict writes. Every wait lasts the same ``timeout``, so the dict, in
    insertion order, is in deadline order: the timer fires at the first deadline, cancels
    the tasks whose deadline passed (``expired`` tells their receive why) and is set again
    for the next one, if any.
    """

    __slots__ = ("expired", "loop", "timeout", "timer", "waiting")

    def __init__(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        self.loop = loop
        self.timeout = timeout
        self.waiting: dict[asyncio.Task[Any], float] = {}
        self.expired: dict[asyncio.Task[Any], bool] = {}
        self.timer: asyncio.TimerHandle | None = None

    def start(self, task: asyncio.Task[Any]) -> None:
        when = self.loop.time() + self.timeout
        self.waiting[task] = when
        if self.timer is None:
            self.timer = self.loop.call_at(when, self._expire)

    def _expire(self) -> None:
        self.timer = None
        now = self.loop.time()
        waiting = self.waiting
        for task, when in list(waiting.items()):
            if when > now:
                self.timer = self.loop.call_at(when, self._expire)
                return
            del waiting[task]
            self.expired[task] = True
            task.cancel()


def _content_type_refusal(content_type: bytes) -> tuple[int, str] | None:
    media = content_type.split(b";", 1)[0].strip().lower()
    if media == b"application/json" or media.endswith(b"+json"):
        return None
    shown = media.decode("latin-1") or "none"
    return (
        415,
        f"The body's Content-Type is {shown!r}; this API takes JSON: send the header "
        "'Content-Type: application/json'.",
    )


def _host_name(header: str) -> str:
    """The name in a Host header, without its port; IPv6 literals without brackets."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
