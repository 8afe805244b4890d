"""What three OpenAI-compatible servers accept and send, as rules for the fake server.

Each dialect is a ``check`` for :class:`FakeProviderServer`: it answers a request the real
server would refuse with the refusal that server sends, and lets the rest through to the
scripted replies. The response side (tool-call ids, usage in streams, finish reasons) is
given by the chunk builders below. The rules, as each server documents or behaves:

* **llama.cpp** (``llama-cpp-python[server]``): the request is validated by pydantic; an
  assistant message's ``content`` must be a string (``null`` fails every member of the
  message union, and the validation error comes back as HTTP 500 with pydantic's error list
  in the message). Streams never carry usage; with ``tool_choice`` set the last chunk of a
  stream has no ``finish_reason``. Tool-call ids look like ``call__0_<name>_cmpl-<uuid>``.
* **Ollama** (``/v1`` compatibility layer): an assistant message's ``content`` must be a
  string or a list of parts; ``null`` is refused with HTTP 400 ``invalid message content
  type: <nil>``. A streamed tool call arrives whole in one chunk; ids are ``call_<random>``.
  Usage comes in a last chunk only when ``stream_options.include_usage`` is set.
* **vLLM**: ``content`` may be ``null``, a string or a list. Tool-call arguments stream in
  fragments; ids are ``chatcmpl-tool-<hex>``; usage comes in a last chunk with no choices
  when ``stream_options.include_usage`` is set.

OpenAI itself accepts ``null`` and ``""`` next to ``tool_calls``; the one spelling all four
accept is ``""``, which is what Eventide sends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.models.fake_provider_servers import RecordedRequest, Reply

__all__ = ["DIALECTS", "llama_cpp_check", "ollama_check", "vllm_check"]


def _assistant_contents(request: RecordedRequest) -> list[tuple[int, Any]]:
    body = request.body if isinstance(request.body, dict) else {}
    return [
        (index, message.get("content", ""))
        for index, message in enumerate(body.get("messages") or [])
        if message.get("role") == "assistant"
    ]


def llama_cpp_check(request: RecordedRequest) -> Reply | None:
    """llama-cpp-python's server: a non-string assistant ``content`` is a 500 with pydantic's
    error list."""
    for index, content in _assistant_contents(request):
        if not isinstance(content, str):
            errors = [
                {
                    "type": "literal_error",
                    "loc": ("body", "messages", index, "typed-dict", "role"),
                    "msg": f"Input should be '{role}'",
                    "input": "assistant",
                }
                for role in ("system", "user", "tool", "function")
            ] + [
                {
                    "type": "string_type",
                    "loc": ("body", "messages", index, "typed-dict", "content"),
                    "msg": "Input should be a valid string",
                    "input": None,
                }
            ]
            return Reply(
                status=500,
                body={
                    "error": {
                        "message": str(errors),
                        "type": "internal_server_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
    return None


def ollama_check(request: RecordedRequest) -> Reply | None:
    """Ollama's ``/v1`` layer: ``null`` assistant ``content`` is a 400."""
    for _, content in _assistant_contents(request):
        if content is None:
            return Reply(
                status=400,
                body={
                    "error": {
                        "message": "invalid message content type: <nil>",
                        "type": "invalid_request_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
    return None


def vllm_check(request: RecordedRequest) -> Reply | None:
    """vLLM accepts ``null``, a string or a list of parts as ``content``."""
    for _, content in _assistant_contents(request):
        if content is not None and not isinstance(content, str | list):
            return Reply(status=400, body={"error": {"message": "bad content", "code": 400}})
    return None


DIALECTS: dict[str, Callable[[RecordedRequest], Reply | None]] = {
    "llama_cpp": llama_cpp_check,
    "ollama": ollama_check,
    "vllm": vllm_check,
}
