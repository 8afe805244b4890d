"""Gemini's built-in tools: ``google_search``, ``url_context`` and ``VertexAiSearchTool``.

The model runs these tools itself, on Google's side: the agent only switches them on in the
request (``types.Tool(google_search={})`` and so on), and the answer comes back grounded,
with its sources in ``event.grounding_metadata``. Only Gemini models have them: an
``LlmAgent`` whose model is named and is not a Gemini model refuses them when it is built,
``google_search`` and ``url_context`` refuse a request for such a model (as google-adk's do;
``ADK_DISABLE_GEMINI_MODEL_ID_CHECK=true`` turns that off), and the other providers'
connectors refuse a request that carries them.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from eventide import types
from eventide.errors import UsageError
from eventide.tools.base_tool import BaseTool

if TYPE_CHECKING:
    from eventide.contexts import ToolContext
    from eventide.models.llm_request import LlmRequest

__all__ = [
    "GeminiBuiltInTool",
    "GoogleSearchTool",
    "UrlContextTool",
    "VertexAiSearchTool",
    "google_search",
    "is_gemini_model_name",
    "url_context",
]


# google-adk's switch for Gemini models served under other names.
_NO_MODEL_CHECK = "ADK_DISABLE_GEMINI_MODEL_ID_CHECK"


def is_gemini_model_name(name: str) -> bool:
    """Whether ``name`` names a Gemini model (``gemini-*``, or a Vertex AI resource path or
    ``models/`` name ending in one)."""
    return name.rsplit("/", 1)[-1].startswith("gemini-")


class GeminiBuiltInTool(BaseTool):
    """A tool Gemini runs itself; the agent switches it on in each request.

    Subclasses set ``tool_field`` (the ``types.Tool`` field that switches the tool on) and
    return its settings from :meth:`settings`.
    """

    tool_field: str = ""
    # google-adk's label in its "... tool is not supported for model X" error; empty for a
    # tool google-adk does not check at request time.
    adk_label: str = ""

    def settings(self) -> dict[str, Any]:
        """The settings sent in ``types.Tool(<tool_field>=...)``."""
        return {}

    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        model = llm_request.model
        if (
            self.adk_label
            and not (model and is_gemini_model_name(model))
            and os.environ.get(_NO_MODEL_CHECK, "").lower() not in ("1", "true", "yes")
        ):
            # The same check as when the agent is built, for requests built another way (an
            # agent without a model of its own, a request made by hand), as google-adk does.
            raise UsageError(
                f"{self.adk_label} tool is not supported for model {model}: {self.name} is a "
                "Gemini built-in tool. Use a Gemini model (e.g. 'gemini-2.5-flash'), or set "
                f"{_NO_MODEL_CHECK}=true when the model is Gemini under another name."
            )
        tools = llm_request.config.tools if llm_request.config.tools is not None else []
        tools.append(types.Tool.model_validate({self.tool_field: self.settings()}))
        llm_request.config.tools = tools

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        # Gemini runs the tool on its side and never sends Eventide a call of it.
        return {"error": f"{self.name} is run by the model itself, not by Eventide."}


class GoogleSearchTool(GeminiBuiltInTool):
    """Grounds the model's answers in Google Search results (Gemini 2 and later).

    Args:
        bypass_multi_tools_limit: accepted for google-adk compatibility; Eventide sends
            built-in tools next to function tools in every case.
        model: accepted for google-adk compatibility (the agent's model is used).
    """

    tool_field = "google_search"
    adk_label = "Google search"

    def __init__(self, *, bypass_multi_tools_limit: bool = False, model: str | None = None) -> None:
        super().__init__(name="google_search", description="google_search")
        self.bypass_multi_tools_limit = bypass_multi_tools_limit
        self.model = model


class UrlContextTool(GeminiBuiltInTool):
    """Lets the model read the web pages whose URLs appear in the conversation."""

    tool_field = "url_context"
    adk_label = "Url context"

    def __init__(self) -> None:
        super().__init__(name="url_context", description="url_context")


class VertexAiSearchTool(GeminiBuiltInTool):
    """Grounds answers in a Vertex AI Search data store or search engine.

    It needs Vertex AI (``GOOGLE_GENAI_USE_VERTEXAI=true`` and ``GOOGLE_CLOUD_PROJECT``) and
    exactly one of ``data_store_id`` / ``search_engine_id`` (full resource names); without
    them it raises :class:`~eventide.errors.UsageError` when built.
    """

    tool_field = "retrieval"

    def __init__(
        self,
        *,
        data_store_id: str | None = None,
        data_store_specs: list[Any] | None = None,
        search_engine_id: str | None = None,
        filter: str | None = None,
        max_results: int | None = None,
        bypass_multi_tools_limit: bool = False,
        name: str | None = None,
        description: str | None = None,
    ) -> None:
        if (data_store_id is None) == (search_engine_id is None):
            raise UsageError(
                "VertexAiSearchTool needs exactly one of data_store_id= (projects/P/locations/"
                "L/collections/C/dataStores/D) or search_engine_id= (projects/P/locations/L/"
                "collections/C/engines/E)."
            )
        if data_store_specs and search_engine_id is None:
            raise UsageError("VertexAiSearchTool: data_store_specs= needs search_engine_id=.")
        missing = _missing_vertex_settings(os.environ)
        if missing:
            raise UsageError(
                "VertexAiSearchTool needs Vertex AI (a Google Cloud service), and "
                f"{' and '.join(missing)} is not set. Set GOOGLE_GENAI_USE_VERTEXAI=true and "
                "GOOGLE_CLOUD_PROJECT (with Application Default Credentials) to use it; "
                "without Google Cloud, give the agent a FunctionTool that searches your own "
                "index (e.g. SqlMemoryService or a vector store), or use google_search for "
                "the public web."
            )
        super().__init__(
            name=name or "vertex_ai_search", description=description or "vertex_ai_search"
        )
        self.data_store_id = data_store_id
        self.data_store_specs = data_store_specs
        self.search_engine_id = search_engine_id
        self.filter = filter
        self.max_results = max_results
        self.bypass_multi_tools_limit = bypass_multi_tools_limit

    def settings(self) -> dict[str, Any]:
        search: dict[str, Any] = {}
        if self.data_store_id is not None:
            search["datastore"] = self.data_store_id
        if self.search_engine_id is not None:
            search["engine"] = self.search_engine_id
        if self.data_store_specs:
            search["data_store_specs"] = [
                spec.model_dump(exclude_none=True) if hasattr(spec, "model_dump") else spec
                for spec in self.data_store_specs
            ]
        if self.filter is not None:
            search["filter"] = self.filter
        if self.max_results is not None:
            search["max_results"] = self.max_results
        return {"vertex_ai_search": search}


def _missing_vertex_settings(env: Any) -> list[str]:
    missing: list[str] = []
    if env.get("GOOGLE_GENAI_USE_VERTEXAI", "").lower() not in ("1", "true", "yes"):
        missing.append("GOOGLE_GENAI_USE_VERTEXAI=true")
    if not env.get("GOOGLE_CLOUD_PROJECT"):
        missing.append("GOOGLE_CLOUD_PROJECT")
    return missing


google_search = GoogleSearchTool()
url_context = UrlContextTool()
