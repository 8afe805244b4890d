"""``Runner.run_debug``: try an agent with a few messages and see its answers printed.

The printed form is google-adk's, so a tutorial's expected output matches on both:
``author > text`` per event (its text parts joined, thoughts left out); with ``verbose``,
also ``author > [Calling tool: name(args)]``, ``[Tool result: ...]``, ``[Executing LANG
code...]``, ``[Code output: ...]``, ``[Inline data: MIME]`` and ``[File: URI]``, long values
cut to a preview. Every event the run yields is printed and returned, partial (streamed)
ones included.
"""

from __future__ import annotations

import logging
from contextlib import aclosing
from typing import TYPE_CHECKING

from eventide import types
from eventide.events import Event

if TYPE_CHECKING:
    from eventide.run_config import RunConfig
    from eventide.runner import Runner

__all__ = ["print_event", "run_debug"]

logger = logging.getLogger("eventide.runner")

# How much of a tool call's arguments, a tool's result and a code output to show.
_ARGS_PREVIEW = 50
_RESULT_PREVIEW = 100
_CODE_OUTPUT_PREVIEW = 100


def _preview(value: object, limit: int) -> str:
    text = str(value)
    return f"{text[:limit]}..." if len(text) > limit else text


def _marker(part: types.Part) -> str | None:
    """The bracketed line shown for a part that is not text (verbose output only)."""
    if part.function_call is not None:
        call = part.function_call
        return f"[Calling tool: {call.name}({_preview(call.args, _ARGS_PREVIEW)})]"
    if part.function_response is not None:
        return f"[Tool result: {_preview(part.function_response.response, _RESULT_PREVIEW)}]"
    if part.executable_code is not None:
        return f"[Executing {part.executable_code.language or 'code'} code...]"
    if part.code_execution_result is not None:
        output = part.code_execution_result.output or "result"
        return f"[Code output: {_preview(output, _CODE_OUTPUT_PREVIEW)}]"
    if part.inline_data is not None:
        return f"[Inline data: {part.inline_data.mime_type or 'data'}]"
    if part.file_data is not None:
        return f"[File: {part.file_data.file_uri or 'file'}]"
    return None


def print_event(event: Event, *, verbose: bool = False) -> None:
    """Print ``event`` as ``run_debug`` does (see the module docstring)."""
    content = event.content
    if content is None or not content.parts:
        return
    texts: list[str] = []
    lines: list[str] = []
    for part in content.parts:
        if part.thought and not verbose:
            continue
        if part.text:
            texts.append(part.text)
            continue
        if texts:  # consecutive text parts print as one line, in order with the rest
            lines.append("".join(texts))
            texts.clear()
        marker = _marker(part) if verbose else None
        if marker is not None:
            lines.append(marker)
    if texts:
        lines.append("".join(texts))
    for line in lines:
        print(f"{event.author} > {line}")


async def run_debug(
    runner: Runner,
    user_messages: str | list[str],
    *,
    user_id: str,
    session_id: str,
    run_config: RunConfig | None,
    quiet: bool,
    verbose: bool,
) -> list[Event]:
    """The body of :meth:`Runner.run_debug`."""
    if isinstance(user_messages, str):
        user_messages = [user_messages]
    service = runner.session_service
    session = await service.get_session(
        app_name=runner.app_name, user_id=user_id, session_id=session_id
    )
    if session is None:
        await service.create_session(
            app_name=runner.app_name, user_id=user_id, session_id=session_id
        )
        if not quiet:
            logger.info("Created new session: %s", session_id)
    elif not quiet:
        logger.info("Continue session: %s", session_id)
    collected: list[Event] = []
    for message in user_messages:
        if not quiet:
            logger.info("User > %s", message)
        content = types.Content(role="user", parts=[types.Part(text=message)])
        async with aclosing(
            runner.run_async(
                user_id=user_id,
                session_id=session_id,
                new_message=content,
                run_config=run_config,
            )
        ) as events:
            async for event in events:
                if not quiet:
                    print_event(event, verbose=verbose)
                collected.append(event)
    return collected
