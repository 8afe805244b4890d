"""``AgentTool``: an agent (or a whole workflow) called like a function."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from eventide import types
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.child_runs import runner_class
from eventide.output_schemas import parse_answer
from eventide.tools.base_tool import BaseTool
from eventide.tools.function_tool import strip_titles

if TYPE_CHECKING:
    from eventide.agents.base_agent import BaseAgent
    from eventide.contexts import ToolContext

__all__ = ["AgentTool"]


class AgentTool(BaseTool):
    """Run ``agent`` as a tool in a child session of its own.

    The child session starts with a copy of the caller's state; state changes the agent
    commits there are written back through the tool's context (so they land in the tool's
    response event), and artifacts it saves go to the caller's session. The tool returns the
    agent's final answer: its text, or the parsed JSON when the agent has an
    ``output_schema``.

    Args:
        agent: the agent to run; it must not be a sub-agent of another agent.
        skip_summarization: show the agent's answer to the user as is, instead of letting
            the calling model summarize it.
        include_plugins: run the caller's plugins on the agent too (google-adk's default);
            False runs it without them.
    """

    def __init__(
        self, agent: BaseAgent, skip_summarization: bool = False, *, include_plugins: bool = True
    ) -> None:
        super().__init__(name=agent.name, description=agent.description)
        self.agent = agent
        self.skip_summarization = skip_summarization
        self.include_plugins = include_plugins

    def get_declaration(self) -> types.FunctionDeclaration:
        input_schema = getattr(self.agent, "input_schema", None)
        if input_schema is not None:
            schema = input_schema.model_json_schema()
            strip_titles(schema)
        else:
            schema = {
                "type": "object",
                "properties": {"request": {"type": "string"}},
                "required": ["request"],
            }
        return types.FunctionDeclaration(
            name=self.name, description=self.description or None, parameters_json_schema=schema
        )

    async def run_async(self, *, args: dict[str, Any], tool_context: ToolContext) -> Any:
        from eventide.sessions.in_memory_session_service import InMemorySessionService

        input_schema = getattr(self.agent, "input_schema", None)
        if input_schema is not None:
            message = json.dumps(
                input_schema.model_validate(args).model_dump(mode="json", exclude_none=True)
            )
        else:
            message = str(args.get("request", ""))
        if self.skip_summarization:
            tool_context.actions.skip_summarization = True

        ictx = tool_context.invocation_context
        runner = runner_class()(
            app_name=ictx.app_name,
            agent=self.agent,
            session_service=InMemorySessionService(),
            artifact_service=_ForwardingArtifacts(tool_context),
            memory_service=ictx.memory_service,
            plugins=ictx.plugin_manager.plugins if self.include_plugins else (),
        )
        initial = {
            k: v for k, v in tool_context.state.to_dict().items() if not k.startswith("temp:")
        }
        session = await runner.session_service.create_session(
            app_name=ictx.app_name, user_id=ictx.user_id, state=initial
        )
        answer: str | None = None
        async for event in runner.run_async(
            user_id=ictx.user_id,
            session_id=session.id,
            new_message=types.Content(role="user", parts=[types.Part(text=message)]),
            run_config=ictx.run_config,
            # Aborting the caller's invocation aborts this inner one too.
            abort_signal=ictx.abort_state.wait_signal(),
        ):
            if event.actions.state_delta:
                tool_context.state.update(event.actions.state_delta)
            # The answer is the last complete event's content, as google-adk's: a final
            # answer that ends with a code-execution result is not a "final response".
            if event.content is not None and not event.partial:
                answer = answer_text(event.content)
        output_schema = getattr(self.agent, "output_schema", None)
        if output_schema is not None and answer:
            # None fields are left out, as google-adk returns them.
            return parse_answer(output_schema, answer)
        return answer or ""


def answer_text(content: types.Content) -> str:
    """What a user reads of ``content``: its text, code and code results, one part a line.

    Thoughts are left out; a code-execution result loses its trailing newline (google-adk's
    ``AgentTool`` answers the same way).
    """
    pieces: list[str] = []
    for part in content.parts or ():
        if part.thought:
            continue
        if part.text:
            pieces.append(part.text)
        elif part.code_execution_result is not None and part.code_execution_result.output:
            pieces.append(part.code_execution_result.output.rstrip("\n"))
        elif part.executable_code is not None and part.executable_code.code:
            pieces.append(part.executable_code.code)
    return "\n".join(pieces)


class _ForwardingArtifacts(BaseArtifactService):
    """Artifact access of a child session, forwarded to the calling tool's session."""

    def __init__(self, tool_context: ToolContext) -> None:
        self._tool_context = tool_context

    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None,
        filename: str,
        artifact: types.Part,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        return await self._tool_context.save_artifact(filename, artifact, custom_metadata)

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None,
        filename: str,
        version: int | None = None,
    ) -> types.Part | None:
        return await self._tool_context.load_artifact(filename, version)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None
    ) -> list[str]:
        return await self._tool_context.list_artifacts()

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> None:
        service, ictx = self._parent()
        await service.delete_artifact(
            app_name=ictx.app_name,
            user_id=ictx.user_id,
            session_id=ictx.session.id,
            filename=filename,
        )

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> list[int]:
        service, ictx = self._parent()
        return await service.list_versions(
            app_name=ictx.app_name,
            user_id=ictx.user_id,
            session_id=ictx.session.id,
            filename=filename,
        )

    def _parent(self) -> tuple[BaseArtifactService, Any]:
        ictx = self._tool_context.invocation_context
        service = ictx.artifact_service
        if service is None:
            from eventide.errors import ConfigurationError

            raise ConfigurationError("The calling Runner has no artifact service.")
        return service, ictx
