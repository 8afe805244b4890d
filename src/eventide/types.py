"""Content types with the field names and JSON shape of the Gemini API content model.

``Content(role, parts)`` holds ``Part``s; a part carries exactly one payload: ``text``,
``function_call``, ``function_response``, ``inline_data``, ``file_data``,
``executable_code`` or ``code_execution_result`` (``thought=True`` marks reasoning text).

Objects from ``google.genai.types`` are accepted wherever these types are (converted by
value), and :func:`to_content` turns a plain string into a user message.
"""

from __future__ import annotations

from typing import Any, Literal, cast

from pydantic import ConfigDict, Field, model_validator

from eventide._json import JsonObject, JsonValue
from eventide._model import (
    EventideModel,
    camel_case_keys,
    foreign_to_dict,
    json_fields,
    snake_case_keys,
)

__all__ = [
    "Blob",
    "CodeExecutionResult",
    "Content",
    "ExecutableCode",
    "FileData",
    "FunctionCall",
    "FunctionDeclaration",
    "FunctionResponse",
    "GenerateContentConfig",
    "GroundingChunk",
    "GroundingChunkWeb",
    "GroundingMetadata",
    "GroundingSupport",
    "JsonObject",
    "JsonValue",
    "Part",
    "RetrievedContext",
    "Schema",
    "SearchEntryPoint",
    "Segment",
    "ThinkingConfig",
    "Tool",
    "ToolConfig",
    "UsageMetadata",
    "camel_case_keys",
    "snake_case_keys",
    "to_content",
]


class _Accepting(EventideModel):
    """A record that also accepts the same-named object of google.genai, by value.

    ``from_attributes`` lets pydantic read such objects' attributes (their field names are
    the same) in its compiled validator: no Python code runs per record, which matters on
    the streaming path where every chunk builds a Content and its Parts.

    ``eventide_obj == genai_obj`` compares by value: the genai object is read into this
    record's type first, so the fields Eventide has must be equal (google-genai's own
    ``__eq__`` decides ``genai_obj == eventide_obj``, and says False).
    """

    model_config = ConfigDict(from_attributes=True)

    def __eq__(self, other: object) -> bool:
        if type(other) is type(self):
            return super().__eq__(other)
        if _is_genai(other, type(self).__name__):
            return super().__eq__(type(self).model_validate(other))
        return super().__eq__(other)

    __hash__ = None  # type: ignore[assignment]  # mutable records, as in pydantic


# Eventide's records google-genai names otherwise (its name for the same record).
_GENAI_NAMES = {"UsageMetadata": "GenerateContentResponseUsageMetadata"}


def _is_genai(value: object, name: str) -> bool:
    cls = type(value)
    return (cls.__name__ == name or cls.__name__ == _GENAI_NAMES.get(name)) and (
        cls.__module__.startswith("google.genai")
    )


class FunctionCall(_Accepting):
    """A model's request to call a tool. ``id`` links the call to its response."""

    id: str | None = None
    name: str | None = None
    args: dict[str, Any] | None = None


class FunctionResponse(_Accepting):
    """The result of a tool call, sent back to the model. ``id`` matches the call's id."""

    id: str | None = None
    name: str | None = None
    response: dict[str, Any] | None = None
    will_continue: bool | None = None


class Blob(_Accepting):
    """Inline bytes with their MIME type (images, audio, documents)."""

    mime_type: str | None = None
    data: bytes | None = None
    display_name: str | None = None


class FileData(_Accepting):
    """A reference to a file by URI."""

    file_uri: str | None = None
    mime_type: str | None = None
    display_name: str | None = None


class ExecutableCode(_Accepting):
    """Code the model generated for a code-execution tool."""

    code: str | None = None
    language: str | None = None


class CodeExecutionResult(_Accepting):
    """The outcome of running :class:`ExecutableCode`."""

    outcome: str | None = None
    output: str | None = None


class Part(_Accepting):
    """One piece of a :class:`Content`."""

    text: str | None = None
    thought: bool | None = None
    thought_signature: bytes | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    inline_data: Blob | None = None
    file_data: FileData | None = None
    executable_code: ExecutableCode | None = None
    code_execution_result: CodeExecutionResult | None = None

    @classmethod
    def from_text(cls, text: str) -> Part:
        """A text part."""
        return cls(text=text)

    @classmethod
    def from_bytes(cls, *, data: bytes, mime_type: str) -> Part:
        """An inline-data part."""
        return cls(inline_data=Blob(data=data, mime_type=mime_type))

    @classmethod
    def from_function_call(cls, *, name: str, args: dict[str, Any]) -> Part:
        """A function-call part."""
        return cls(function_call=FunctionCall(name=name, args=args))

    @classmethod
    def from_function_response(cls, *, name: str, response: dict[str, Any]) -> Part:
        """A function-response part."""
        return cls(function_response=FunctionResponse(name=name, response=response))


class Content(_Accepting):
    """A message: a ``role`` ('user' or 'model') and its parts."""

    role: str | None = None
    parts: list[Part] | None = None

    @property
    def text(self) -> str | None:
        """The concatenated non-thought text of the parts, or None when there is none."""
        if not self.parts:
            return None
        texts = [p.text for p in self.parts if p.text is not None and not p.thought]
        return "".join(texts) if texts else None


class UsageMetadata(_Accepting):
    """Token counts reported by the model."""

    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    total_token_count: int | None = None
    cached_content_token_count: int | None = None
    thoughts_token_count: int | None = None


class _Open(_Accepting):
    """A provider record whose extra fields (added by newer API versions) are kept."""

    model_config = ConfigDict(from_attributes=True, extra="allow")


class GroundingChunkWeb(_Open):
    """A web page a grounded answer drew on."""

    uri: str | None = None
    title: str | None = None
    domain: str | None = None


class RetrievedContext(_Open):
    """A document from a retrieval store (Vertex AI Search, RAG) a grounded answer drew on."""

    uri: str | None = None
    title: str | None = None
    text: str | None = None


class GroundingChunk(_Open):
    """One source of a grounded answer: a web page or a retrieved document."""

    web: GroundingChunkWeb | None = None
    retrieved_context: RetrievedContext | None = None


class Segment(_Open):
    """A span of the answer's text."""

    start_index: int | None = None
    end_index: int | None = None
    part_index: int | None = None
    text: str | None = None


class GroundingSupport(_Open):
    """Which chunks (by index into ``grounding_chunks``) support a segment of the answer."""

    segment: Segment | None = None
    grounding_chunk_indices: list[int] | None = None
    confidence_scores: list[float] | None = None


class SearchEntryPoint(_Open):
    """The search suggestions widget Google Search grounding asks apps to show."""

    rendered_content: str | None = None
    sdk_blob: bytes | None = None


class GroundingMetadata(_Open):
    """How a model's answer is grounded (Google Search, URL context, retrieval).

    Read it with attributes: ``.web_search_queries``, ``.grounding_chunks[i].web.uri``,
    ``.grounding_supports``, ``.search_entry_point.rendered_content``.
    """

    web_search_queries: list[str] | None = None
    grounding_chunks: list[GroundingChunk] | None = None
    grounding_supports: list[GroundingSupport] | None = None
    search_entry_point: SearchEntryPoint | None = None
    retrieval_queries: list[str] | None = None
    retrieval_metadata: dict[str, Any] | None = None


class ThinkingConfig(_Accepting):
    """How much a model may think: ``thinking_budget`` tokens (0 off, -1 the model's
    choice) and whether its thoughts come back as ``thought=True`` parts."""

    thinking_budget: int | None = None
    include_thoughts: bool | None = None


class Schema(_Accepting):
    """A schema in the Gemini API's OpenAPI subset (``type='OBJECT'``, ``properties``...),
    as google-adk code writes tool declarations; :meth:`to_json_schema` converts it."""

    type: str | None = None
    description: str | None = None
    format: str | None = None
    nullable: bool | None = None
    enum: list[str] | None = None
    properties: dict[str, Schema] | None = None
    required: list[str] | None = None
    items: Schema | None = None
    any_of: list[Schema] | None = None
    default: Any | None = None
    minimum: float | None = None
    maximum: float | None = None
    min_items: int | None = None
    max_items: int | None = None
    title: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_type_enum(cls, data: Any) -> Any:
        # google-genai's ``Type.OBJECT`` is a str enum; keep its value.
        fields = json_fields(data)
        if fields is not None and fields.get("type") is not None:
            kind: object = fields["type"]
            return {**fields, "type": getattr(kind, "value", kind)}
        return data

    def to_json_schema(self) -> dict[str, Any]:
        """This schema as JSON Schema (lower-case types, ``anyOf``, nullable as a union)."""
        return _json_schema(self.model_dump(exclude_none=True))


def _json_schema(schema: Any) -> dict[str, Any]:
    """JSON Schema from an OpenAPI-subset schema (a ``Schema``, google-genai's, or a dict,
    which may already be JSON Schema)."""
    if isinstance(schema, Schema):
        return _convert_schema(schema.model_dump(exclude_none=True))
    fields = json_fields(schema)
    if fields is None:
        fields = Schema.model_validate(schema).model_dump(exclude_none=True)
    return _convert_schema(fields)


_SCHEMA_KEYS = {"any_of": "anyOf", "min_items": "minItems", "max_items": "maxItems"}


def _convert_schema(data: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in data.items():
        key = _SCHEMA_KEYS.get(key, key)
        if key == "type" and isinstance(value, str):
            value = getattr(value, "value", value).lower()
        elif key == "properties" and isinstance(value, dict):
            properties = cast("dict[str, object]", value)
            value = {name: _convert_schema(_plain(sub)) for name, sub in properties.items()}
        elif key == "items" and value is not None:
            value = _convert_schema(_plain(value))
        elif key == "anyOf" and isinstance(value, list):
            value = [_convert_schema(_plain(sub)) for sub in cast("list[object]", value)]
        out[key] = value
    if out.pop("nullable", None) and isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    return out


def _plain(value: object) -> dict[str, Any]:
    fields = json_fields(value)
    if fields is not None:
        return fields
    return Schema.model_validate(value).model_dump(exclude_none=True)


class FunctionDeclaration(_Accepting):
    """A tool as the model sees it: name, description and a JSON Schema of its parameters."""

    name: str
    description: str | None = None
    parameters_json_schema: dict[str, Any] | None = None
    response_json_schema: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_parameters(cls, data: Any) -> Any:
        # The Gemini API also names the schema ``parameters`` (an OpenAPI subset: a
        # ``Schema``, google-genai's, or a dict), converted here to JSON Schema.
        fields = _declaration_fields(data)
        if fields is None:
            return data
        params = fields.pop("parameters")
        if params is not None and fields.get("parameters_json_schema") is None:
            fields["parameters_json_schema"] = _json_schema(params)
        return fields


def _declaration_fields(data: object) -> dict[str, Any] | None:
    """A function declaration's fields when they include ``parameters`` (a copy), else None."""
    found = json_fields(data)
    if found is not None:
        return dict(found) if "parameters" in found else None
    if not _is_genai(data, "FunctionDeclaration"):
        return None
    declaration: Any = data
    return {
        "name": declaration.name,
        "description": declaration.description,
        "parameters": declaration.parameters,
        "parameters_json_schema": declaration.parameters_json_schema,
        "response_json_schema": declaration.response_json_schema,
    }


class Tool(_Accepting):
    """A group of tools offered to the model.

    ``function_declarations`` are Eventide's function tools; ``code_execution``,
    ``google_search``, ``url_context`` and ``retrieval`` switch on Gemini's built-in tools
    (other providers refuse them).
    """

    function_declarations: list[FunctionDeclaration] | None = None
    code_execution: dict[str, Any] | None = None
    google_search: dict[str, Any] | None = None
    url_context: dict[str, Any] | None = None
    retrieval: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_genai_settings(cls, data: Any) -> Any:
        # google.genai spells the built-in tools' settings as objects
        # (``GoogleSearch()``, ``ToolCodeExecution()``); they are kept as their JSON data.
        if not isinstance(data, dict):
            if not _is_genai(data, "Tool"):
                return data
            data = foreign_to_dict(data)
        if not isinstance(data, dict):
            return data
        given = cast("dict[str, Any]", data)
        fields = ("code_execution", "google_search", "url_context", "retrieval")
        if any(given.get(f) is not None and not isinstance(given.get(f), dict) for f in fields):
            given = {
                **given,
                **{f: foreign_to_dict(given[f]) for f in fields if given.get(f) is not None},
            }
        return given


class ToolConfig(_Accepting):
    """How the model may use tools: ``mode`` is 'AUTO', 'ANY' or 'NONE'."""

    mode: Literal["AUTO", "ANY", "NONE"] | None = None
    allowed_function_names: list[str] | None = None


class GenerateContentConfig(_Accepting):
    """Generation settings of one model request (the Gemini API's GenerateContentConfig)."""

    system_instruction: str | None = None
    tools: list[Tool] | None = None
    tool_config: ToolConfig | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: float | None = None
    max_output_tokens: int | None = None
    stop_sequences: list[str] | None = None
    candidate_count: int | None = None
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    response_mime_type: str | None = None
    response_json_schema: dict[str, Any] | None = None
    thinking_budget: int | None = None
    labels: dict[str, str] | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _accept_system_instruction(cls, data: Any) -> Any:
        if not isinstance(data, dict | EventideModel):
            data = foreign_to_dict(data)
        if not isinstance(data, dict):
            return data
        fields = cast("dict[str, Any]", data)
        si = fields.get("system_instruction")
        if si is not None and not isinstance(si, str):
            content = Content.model_validate(si)
            fields = {**fields, "system_instruction": content.text or ""}
        thinking = fields.get("thinking_config")
        if thinking is not None:
            # google.genai's spelling: thinking_config=ThinkingConfig(thinking_budget=...).
            budget = ThinkingConfig.model_validate(thinking).thinking_budget
            fields = {k: v for k, v in fields.items() if k != "thinking_config"}
            if budget is not None and fields.get("thinking_budget") is None:
                fields["thinking_budget"] = budget
        return fields


def to_content(message: Any, *, role: str = "user") -> Content:
    """Turn what callers pass as a message into :class:`Content`.

    Accepts a ``Content``, a plain string (one text part), a dict in the Gemini JSON shape,
    or a ``google.genai.types.Content``.
    """
    if isinstance(message, Content):
        return message
    if isinstance(message, str):
        return Content(role=role, parts=[Part(text=message)])
    return Content.model_validate(message)
