"""Built-in tools: ``exit_loop``, ``load_artifacts``, ``load_memory``, ``preload_memory``.

(``transfer_to_agent`` is offered automatically to agents that have somewhere to transfer.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from eventide import types
from eventide.tools.base_tool import BaseTool
from eventide.tools.function_tool import FunctionTool

if TYPE_CHECKING:
    from eventide.contexts import ToolContext
    from eventide.models.llm_request import LlmRequest

__all__ = ["exit_loop", "load_artifacts", "load_memory", "preload_memory"]


def _exit_loop(tool_context: ToolContext) -> None:
    """Exit the loop. Call this only when the loop's goal is reached or you are told to stop."""
    tool_context.actions.escalate = True
    tool_context.actions.skip_summarization = True
    # No result: the function response is ``{"result": None}``, as google-adk's.


exit_loop = FunctionTool(_exit_loop, name="exit_loop")


async def _load_memory(query: str, tool_context: ToolContext) -> dict[str, Any]:
    """Search the user's memory of past conversations.

    Args:
        query: what to look for.
    """
    found = await tool_context.search_memory(query)
    return {
        "memories": [
            {"author": m.author, "timestamp": m.timestamp, "text": m.content.text or ""}
            for m in found.memories
        ]
    }


load_memory = FunctionTool(_load_memory, name="load_memory")


class LoadArtifactsTool(BaseTool):
    """Lists the session's artifacts to the model and loads the ones it asks for."""

    def __init__(self) -> None:
        super().__init__(
            name="load_artifacts",
            description="Load the content of artifacts (files) of this conversation by name.",
        )

    def get_declaration(self) -> types.FunctionDeclaration:
        return types.FunctionDeclaration(
            name=self.name,
            description=self.description,
            parameters_json_schema={
                "type": "object",
                "properties": {"artifact_names": {"type": "array", "items": {"type": "string"}}},
                "required": ["artifact_names"],
            },
        )

    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        await super().process_llm_request(tool_context=tool_context, llm_request=llm_request)
        names = await tool_context.list_artifacts()
        if names:
            llm_request.append_instructions(
                [
                    "These artifacts are available; call `load_artifacts` to read them: "
                    + ", ".join(f"`{name}`" for name in names)
                ]
            )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        loaded: dict[str, Any] = {}
        names: object = args.get("artifact_names")
        for raw_name in cast("list[object]", names) if isinstance(names, list) else []:
            name = str(raw_name)
            part = await tool_context.load_artifact(name)
            if part is None:
                loaded[name] = {"error": f"No artifact named {name!r}."}
            elif part.text is not None:
                loaded[name] = {"text": part.text}
            elif part.inline_data is not None and part.inline_data.data is not None:
                blob = part.inline_data
                data = blob.data or b""
                if (blob.mime_type or "").startswith("text/") or blob.mime_type in (
                    "application/json",
                ):
                    loaded[name] = {"text": data.decode("utf-8", errors="replace")}
                else:
                    loaded[name] = {"mime_type": blob.mime_type, "size_bytes": len(data)}
            else:
                loaded[name] = {"error": "The artifact has no readable content."}
        return {"artifacts": loaded}


load_artifacts = LoadArtifactsTool()


class PreloadMemoryTool(BaseTool):
    """Before each model call, searches memory with the user's message and adds what it
    finds to the instructions. The model never calls it."""

    def __init__(self) -> None:
        super().__init__(name="preload_memory", description="Adds relevant memories.")

    async def process_llm_request(
        self, *, tool_context: ToolContext, llm_request: LlmRequest
    ) -> None:
        user_content = tool_context.user_content
        query = user_content.text if user_content is not None else None
        if not query:
            return
        found = await tool_context.search_memory(query)
        if not found.memories:
            return
        lines = [
            f"- [{m.timestamp or ''}] {m.author or 'unknown'}: {m.content.text or ''}"
            for m in found.memories
        ]
        llm_request.append_instructions(
            ["Relevant notes from past conversations with this user:\n" + "\n".join(lines)]
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        return {"error": "preload_memory is not callable."}


preload_memory = PreloadMemoryTool()
