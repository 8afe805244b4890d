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
import re
from collections.abc import AsyncIterator
from typing import Any

from eventide import types
from eventide.models._history import GEMINI_BUILTIN_TOOLS
from eventide.models._json import JsonObject, integer, obj, objects, string
from eventide.models._stream_assembler import StreamAssembler, token_usage
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.models.providers import GeminiProvider, Provider
from eventide.models.remote_llm import RemoteLlm, WireCall

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
        provider: where the model is served (overrides the fields above and ``timeout``).
    """

    model: str = "gemini-2.5-flash"
    api_key: str | None = None
    vertexai: bool | None = None
    project: str | None = None
    location: str | None = None
    credentials: Any = None
    base_url: str | None = None
    api_version: str | None = None
    provider: GeminiProvider | None = None

    @classmethod
    def supported_models(cls) -> list[str]:
        """``gemini-*`` and ``models/gemini-*``."""
        return [r"gemini-.*", r"models/gemini-.*"]

    def _make_provider(self) -> GeminiProvider:
        if self.provider is not None:
            return self.provider
        return GeminiProvider(
            api_key=self.api_key,
            vertexai=self.vertexai,
            project=self.project,
            location=self.location,
            credentials=self.credentials,
            base_url=self.base_url,
            api_version=self.api_version,
            timeout=self.timeout,
        )

    def _wire_call(self, llm_request: LlmRequest, provider: Provider) -> WireCall:
        assert isinstance(provider, GeminiProvider)
        models: Any = provider.client().aio.models
        contents = gemini_contents(llm_request)
        config = gemini_config(llm_request, vertexai=provider.vertexai)

        async def send() -> object:
            result: object = await models.generate_content(
                model=self.model, contents=contents, config=config
            )
            return result

        async def open_stream() -> AsyncIterator[object]:
            created = await models.generate_content_stream(
                model=self.model, contents=contents, config=config
            )
            return aiter(created)

        return WireCall(send=send, open_stream=open_stream, read=_read, feed=_feed)


Gemini = GeminiLlm
"""google-adk's name for this connector, so ported code keeps working."""


def gemini_contents(llm_request: LlmRequest) -> list[dict[str, Any]]:
    """The request's history as Gemini ``contents`` (plain data the SDK validates)."""
    contents: list[dict[str, Any]] = []
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
    tools: list[dict[str, Any]] = []
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


def _as_json(response: object) -> JsonObject:
    # JSON mode keeps bytes (thought signatures, inline data) as base64 text, which
    # Eventide's types read back from JSON unchanged.
    dump: Any = getattr(response, "model_dump_json", None)
    if dump is None:
        return obj(response)
    data: object = json.loads(dump(exclude_none=True))
    return obj(data)


def read_gemini_response(data: JsonObject, assembler: StreamAssembler) -> None:
    """Feed a whole ``GenerateContentResponse`` (as JSON data) into ``assembler``."""
    _read_chunk(data, assembler, whole=True)
    assembler.finish(None)


def _read_chunk(data: JsonObject, assembler: StreamAssembler, *, whole: bool) -> list[LlmResponse]:
    usage = obj(data.get("usage_metadata"))
    if usage:
        assembler.usage = token_usage(
            prompt=integer(usage.get("prompt_token_count")),
            output=integer(usage.get("candidates_token_count")),
            total=integer(usage.get("total_token_count")),
            cached=integer(usage.get("cached_content_token_count")),
            thoughts=integer(usage.get("thoughts_token_count")),
        )
    version = string(data.get("model_version"))
    if version:
        assembler.model_version = version
    candidates = objects(data.get("candidates"))
    if not candidates:
        block = string(obj(data.get("prompt_feedback")).get("block_reason"))
        if block or whole:
            assembler.end_with(
                LlmResponse(
                    error_code="SAFETY" if block else "EMPTY_RESPONSE",
                    error_message=(
                        f"Gemini blocked the prompt ({block})."
                        if block
                        else "Gemini returned no candidates."
                    ),
                    usage_metadata=assembler.usage,
                    model_version=assembler.model_version,
                    turn_complete=True,
                )
            )
        return []
    candidate = candidates[0]
    partials: list[LlmResponse] = []
    for position, raw in enumerate(objects(obj(candidate.get("content")).get("parts"))):
        part = types.Part.model_validate_json(json.dumps(raw))
        if part.text and not _has_payload(raw):
            partial = assembler.text(
                part.text,
                thought=bool(part.thought),
                signature=part.thought_signature,
                # A whole response keeps its parts apart; streamed text joins up.
                block=position if whole else None,
            )
            if partial is not None:
                partials.append(partial)
        else:
            assembler.part(part)
    grounding = obj(candidate.get("grounding_metadata"))
    if grounding:
        assembler.grounding_metadata = types.GroundingMetadata.model_validate_json(
            json.dumps(grounding)
        )
    finish = string(candidate.get("finish_reason"))
    if finish:
        assembler.finish(finish)
        if finish in _ERROR_FINISH:
            assembler.fail(
                finish,
                string(candidate.get("finish_message"))
                or f"Gemini stopped the answer (finish reason {finish}).",
            )
    return partials


def _read(result: object, assembler: StreamAssembler) -> None:
    read_gemini_response(_as_json(result), assembler)


def _feed(item: object, assembler: StreamAssembler) -> list[LlmResponse]:
    return _read_chunk(_as_json(item), assembler, whole=False)


def _has_payload(part: JsonObject) -> bool:
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
