"""Gemini connector (the ``google-genai`` SDK): the Gemini API and Vertex AI.

Install with ``pip install 'eventide[gemini]'``. Model names ``gemini-*`` and
``models/gemini-*`` resolve here. The Gemini API key comes from ``GOOGLE_API_KEY`` or
``GEMINI_API_KEY``; ``GeminiLlm(model=..., vertexai=True, project=..., location=...)`` (or
``GOOGLE_GENAI_USE_VERTEXAI=true`` with ``GOOGLE_CLOUD_PROJECT``/``GOOGLE_CLOUD_LOCATION``)
uses Vertex AI with Application Default Credentials instead.

Eventide's content types have Gemini's shape, so the translation is nearly one to one. Two
things differ: function calls Gemini returns without an id get the stable id ``call_<n>``
(those generated ids are not sent back: Gemini pairs by order), and built-in tools
(``Tool(code_execution={})``, ``Tool(google_search={})``) pass straight through, their
``executable_code``/``code_execution_result`` parts and grounding metadata landing on the
response.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

from eventide import types
from eventide.models._connector_support import (
    GEMINI_BUILTIN_TOOLS,
    OpenedStream,
    ProviderFailure,
    RemoteLlm,
    api_key_from_env,
    call_with_retries,
    close_stream,
    count_function_calls,
    fill_missing_call_ids,
    guarded_stream,
    open_stream_with_retries,
    partial_text_response,
    status_code_failure,
)
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse

__all__ = ["Gemini", "GeminiLlm"]

_GENERATED_ID = re.compile(r"call_\d+")
# Finish reasons that mean the answer was withheld or unusable: reported as the error code.
_ERROR_FINISH = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "MALFORMED_FUNCTION_CALL",
    "UNEXPECTED_TOOL_CALL",
}


class GeminiLlm(RemoteLlm):
    """A Gemini model through the Gemini API or Vertex AI.

    Attributes:
        model: ``gemini-2.5-flash`` (or ``models/gemini-2.5-flash``).
        api_key: the Gemini API key; default ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``.
        vertexai: use Vertex AI (default: ``GOOGLE_GENAI_USE_VERTEXAI``).
        project: the Vertex AI project (default ``GOOGLE_CLOUD_PROJECT``).
        location: the Vertex AI region (default ``GOOGLE_CLOUD_LOCATION``).
        credentials: Vertex AI credentials (``google.auth.credentials.Credentials``);
            default: Application Default Credentials.
        base_url: another endpoint (a proxy, or a local server in tests).
        api_version: the API version (default ``v1beta``; ``v1beta1`` on Vertex AI).
    """

    model: str = "gemini-2.5-flash"
    api_key: str | None = None
    vertexai: bool | None = None
    project: str | None = None
    location: str | None = None
    credentials: Any = None
    base_url: str | None = None
    api_version: str | None = None

    @classmethod
    def supported_models(cls) -> list[str]:
        """``gemini-*`` and ``models/gemini-*``."""
        return [r"gemini-.*", r"models/gemini-.*"]

    def _use_vertex(self) -> bool:
        if self.vertexai is not None:
            return self.vertexai
        return os.environ.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() in {"1", "true"}

    def _get_client(self) -> Any:
        if self._client is None:
            from google import genai
            from google.genai import types as genai_types

            http_options = genai_types.HttpOptions(
                base_url=self.base_url,
                # Pinned rather than left to the SDK's default, which moved between releases
                # (v1beta in 2.x, v1 in 3.x): the features mapped here (JSON-schema function
                # parameters, code execution, thinking) are served on v1beta, and on
                # Vertex AI on v1beta1.
                api_version=self.api_version or ("v1beta1" if self._use_vertex() else "v1beta"),
                timeout=int(self.timeout * 1000) if self.timeout is not None else None,
                # Retries happen in Eventide, with its own policy, for every connector alike.
                retry_options=genai_types.HttpRetryOptions(attempts=1),
            )
            if self._use_vertex():
                self._client = genai.Client(
                    vertexai=True,
                    project=self.project,
                    location=self.location,
                    credentials=self.credentials,
                    http_options=http_options,
                )
            else:
                key = api_key_from_env(
                    self.api_key, ["GOOGLE_API_KEY", "GEMINI_API_KEY"], provider="Gemini"
                )
                self._client = genai.Client(api_key=key, http_options=http_options)
        return self._client

    async def close(self) -> None:
        """Close the HTTP connections of the SDK client."""
        if self._client is not None:
            await self._client.aio.aclose()
            self._client = None

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Call the model; see :class:`~eventide.models.base_llm.BaseLlm`."""
        client = self._get_client()
        contents = gemini_contents(llm_request)
        config = gemini_config(llm_request, vertexai=self._use_vertex())
        calls_before = count_function_calls(llm_request)
        policy = self._retry_policy()
        models = client.aio.models
        if not stream:
            result = await call_with_retries(
                lambda: models.generate_content(model=self.model, contents=contents, config=config),
                policy=policy,
                classify=_classify,
            )
            if isinstance(result, ProviderFailure):
                yield result.to_response()
            else:
                yield parse_gemini_response(_as_json(result), calls_before=calls_before)
            return

        async def open_stream() -> AsyncIterator[Any]:
            created = await models.generate_content_stream(
                model=self.model, contents=contents, config=config
            )
            return aiter(created)

        opened = await open_stream_with_retries(open_stream, policy=policy, classify=_classify)
        if isinstance(opened, ProviderFailure):
            yield opened.to_response()
            return
        try:
            async for response in _gemini_stream(opened, calls_before):
                yield response
        finally:
            await close_stream(opened.rest)


Gemini = GeminiLlm
"""google-adk's name for this connector, so ported code keeps working."""


def gemini_contents(llm_request: LlmRequest) -> list[dict[str, Any]]:
    """The request's history as Gemini ``contents`` (plain data the SDK validates)."""
    contents = []
    for content in llm_request.contents:
        data = content.model_dump(exclude_none=True)
        for part in data.get("parts") or ():
            for key in ("function_call", "function_response"):
                item = part.get(key)
                if item is not None and _GENERATED_ID.fullmatch(item.get("id") or ""):
                    # Eventide made this id up; Gemini has never seen it.
                    del item["id"]
            for key in ("inline_data", "file_data"):
                if key in part:
                    part[key].pop("display_name", None)  # a Vertex-only field
        contents.append(data)
    return contents


def gemini_config(llm_request: LlmRequest, *, vertexai: bool) -> dict[str, Any]:
    """The request's ``GenerateContentConfig`` as plain data."""
    config = llm_request.config
    data: dict[str, Any] = {
        key: value
        for key, value in {
            "system_instruction": config.system_instruction,
            "temperature": config.temperature,
            "top_p": config.top_p,
            "top_k": config.top_k,
            "max_output_tokens": config.max_output_tokens,
            "stop_sequences": config.stop_sequences,
            "candidate_count": config.candidate_count,
            "seed": config.seed,
            "presence_penalty": config.presence_penalty,
            "frequency_penalty": config.frequency_penalty,
            "response_mime_type": config.response_mime_type,
            "response_json_schema": config.response_json_schema,
        }.items()
        if value is not None
    }
    tools = []
    for tool in config.tools or ():
        entry: dict[str, Any] = {}
        if tool.function_declarations:
            entry["function_declarations"] = [
                d.model_dump(exclude_none=True) for d in tool.function_declarations
            ]
        for builtin in GEMINI_BUILTIN_TOOLS:
            setting = getattr(tool, builtin)
            if setting is not None:
                entry[builtin] = setting
        if entry:
            tools.append(entry)
    if tools:
        data["tools"] = tools
        # Eventide runs the tools itself; the SDK must not try to.
        data["automatic_function_calling"] = {"disable": True}
    if config.tool_config is not None and config.tool_config.mode is not None:
        calling: dict[str, Any] = {"mode": config.tool_config.mode}
        if config.tool_config.allowed_function_names:
            calling["allowed_function_names"] = config.tool_config.allowed_function_names
        data["tool_config"] = {"function_calling_config": calling}
    if config.thinking_budget is not None:
        data["thinking_config"] = {
            "thinking_budget": config.thinking_budget,
            "include_thoughts": config.thinking_budget != 0,
        }
    if config.labels and vertexai:
        data["labels"] = config.labels  # the Gemini API rejects labels; Vertex AI takes them
    data.update(config.extra)
    return data


def _as_json(response: Any) -> dict[str, Any]:
    # JSON mode keeps bytes (thought signatures, inline data) as base64 text, which
    # Eventide's types read back from JSON unchanged.
    data: dict[str, Any] = json.loads(response.model_dump_json(exclude_none=True))
    return data


def parse_gemini_response(data: dict[str, Any], *, calls_before: int) -> LlmResponse:
    """An :class:`LlmResponse` from a ``GenerateContentResponse`` as JSON data."""
    usage = _usage(data.get("usage_metadata"))
    candidates = data.get("candidates") or []
    if not candidates:
        block = (data.get("prompt_feedback") or {}).get("block_reason")
        return LlmResponse(
            error_code="SAFETY" if block else "EMPTY_RESPONSE",
            error_message=(
                f"Gemini blocked the prompt ({block})."
                if block
                else "Gemini returned no candidates."
            ),
            usage_metadata=usage,
            model_version=data.get("model_version"),
            turn_complete=True,
        )
    candidate = candidates[0]
    content = None
    if candidate.get("content", {}).get("parts"):
        content = types.Content.model_validate_json(json.dumps(candidate["content"]))
        content.role = "model"
        fill_missing_call_ids(content.parts or [], calls_before=calls_before)
    finish = candidate.get("finish_reason")
    response = LlmResponse(
        content=content,
        finish_reason=finish,
        usage_metadata=usage,
        grounding_metadata=candidate.get("grounding_metadata"),
        model_version=data.get("model_version"),
        turn_complete=True,
    )
    if finish in _ERROR_FINISH:
        response.error_code = finish
        response.error_message = candidate.get("finish_message") or (
            f"Gemini stopped the answer (finish reason {finish})."
        )
    return response


def _usage(usage: Any) -> types.UsageMetadata | None:
    if not isinstance(usage, dict):
        return None
    return types.UsageMetadata(
        prompt_token_count=usage.get("prompt_token_count"),
        candidates_token_count=usage.get("candidates_token_count"),
        total_token_count=usage.get("total_token_count"),
        cached_content_token_count=usage.get("cached_content_token_count"),
        thoughts_token_count=usage.get("thoughts_token_count"),
    )


async def _gemini_stream(
    opened: OpenedStream[Any], calls_before: int
) -> AsyncGenerator[LlmResponse, None]:
    """Partial text per chunk; then one response merging every chunk's parts."""
    parts: list[dict[str, Any]] = []
    last: dict[str, Any] = {}
    merged: dict[str, Any] = {}
    async for item in guarded_stream(opened, classify=_classify):
        if isinstance(item, ProviderFailure):
            yield item.to_response()
            return
        chunk = _as_json(item)
        for key in ("usage_metadata", "model_version", "prompt_feedback"):
            if key in chunk:
                merged[key] = chunk[key]
        candidates = chunk.get("candidates") or []
        if not candidates:
            continue
        candidate = candidates[0]
        last.update({k: v for k, v in candidate.items() if k != "content"})
        for part in (candidate.get("content") or {}).get("parts") or ():
            if part.get("text") and not _has_payload(part):
                yield partial_text_response(part["text"], thought=bool(part.get("thought")))
                previous = parts[-1] if parts else None
                if (
                    previous is not None
                    and "text" in previous
                    and not _has_payload(previous)
                    and bool(previous.get("thought")) == bool(part.get("thought"))
                ):
                    previous["text"] += part["text"]
                    if "thought_signature" in part:
                        previous["thought_signature"] = part["thought_signature"]
                    continue
            parts.append(dict(part))
    if not last and not merged:
        yield ProviderFailure(
            code="MALFORMED_STREAM", message="Gemini's stream ended without any response."
        ).to_response()
        return
    merged["candidates"] = [{**last, "content": {"role": "model", "parts": parts}}]
    yield parse_gemini_response(merged, calls_before=calls_before)


def _has_payload(part: dict[str, Any]) -> bool:
    return any(
        key in part
        for key in (
            "function_call",
            "function_response",
            "inline_data",
            "file_data",
            "executable_code",
            "code_execution_result",
        )
    )


def _classify(exc: Exception) -> ProviderFailure | None:
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        return status_code_failure(
            exc.code,
            str(exc.status) if exc.status else None,
            str(exc.message or exc),
            provider="Gemini",
        )
    module = type(exc).__module__
    if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
        return ProviderFailure(
            code="TIMEOUT",
            message=f"Gemini did not answer in time ({exc!r}). Raise the connector's timeout.",
        )
    if module.startswith(("httpx", "aiohttp")) or isinstance(exc, ConnectionError):
        return ProviderFailure(
            code="CONNECTION_ERROR", message=f"Cannot reach Gemini: {exc!r}", retryable=True
        )
    return None
