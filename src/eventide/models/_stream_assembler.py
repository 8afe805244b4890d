"""One assembler for every connector's output, streamed or not.

A connector feeds it what the provider sends, in order: text and thought deltas, tool-call
fragments (name and argument pieces keyed by the call's index or block), whole parts,
usage, the finish reason. Each text delta comes back as the partial response to yield; at
the end :meth:`StreamAssembler.final` builds the complete response. A non-streamed answer is
fed the same way in one go, so a streamed answer and a non-streamed one end in the same
:class:`LlmResponse`.

A stream that ends without a finish reason is used when what arrived is complete (some text
or tool calls, every call named and its arguments whole JSON) and logged; one that carried
nothing at all is EMPTY_STREAM (retrying cannot help: the server does not stream this
request); otherwise it is MALFORMED_STREAM.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from eventide import types
from eventide._fastpath import construct_trusted
from eventide.errors import ModelBehaviorError
from eventide.models._failures import empty_stream, malformed_stream
from eventide.models._history import fill_missing_call_ids, json_arguments
from eventide.models.llm_response import LlmResponse

__all__ = ["StreamAssembler", "partial_response", "token_usage"]

_LOG = logging.getLogger("eventide.models")


@dataclass(slots=True)
class _Text:
    thought: bool
    block: int | None = None
    chunks: list[str] = field(default_factory=lambda: [])
    signature: bytes | None = None


@dataclass(slots=True)
class _Call:
    call_id: str | None = None
    name: str = ""
    fragments: list[str] = field(default_factory=lambda: [])
    args: dict[str, object] | None = None


class StreamAssembler:
    """Collects one model answer; see the module docstring.

    Attributes:
        usage: the token counts (the last ones reported win).
        model_version: the model that answered, as the provider names it.
        grounding_metadata: Gemini's grounding data.
        scratch: what a wire format keeps between the items of one stream.
    """

    def __init__(self, *, calls_before: int | Callable[[], int], partials: bool = True) -> None:
        """``calls_before`` numbers id-less calls (a callable is asked only when one comes);
        ``partials=False`` (a whole response, read in one go) builds no partial responses."""
        self._calls_before = calls_before
        self._partials = partials
        self._slots: list[_Text | _Call | types.Part] = []
        self._calls: dict[int | str, _Call] = {}
        self._finished = False
        self._finish_reason: str | None = None
        self._error: tuple[str, str] | None = None
        self._ended: LlmResponse | None = None
        self.usage: types.UsageMetadata | None = None
        self.model_version: str | None = None
        self.grounding_metadata: types.GroundingMetadata | None = None
        # What a wire format keeps between stream items (Anthropic's running usage).
        self.scratch: dict[str, object] = {}

    def text(
        self,
        text: str,
        *,
        thought: bool = False,
        signature: bytes | None = None,
        block: int | None = None,
    ) -> LlmResponse | None:
        """Add text (or a thought); return the partial response to stream, if any.

        Text joins the previous text of the same kind; ``block`` (a provider's content
        block index) keeps different blocks apart.
        """
        if not text and signature is None:
            return None
        last = self._slots[-1] if self._slots else None
        if isinstance(last, _Text) and last.thought == thought and last.block == block:
            slot = last
        else:
            slot = _Text(thought=thought, block=block)
            self._slots.append(slot)
        slot.chunks.append(text)
        if signature is not None:
            slot.signature = signature
        if not text or not self._partials:
            return None
        return LlmResponse(
            content=types.Content(role="model", parts=[_text_part(text, thought)]), partial=True
        )

    def signature(self, signature: bytes, *, block: int | None = None) -> None:
        """Sign the last thought of ``block`` (Anthropic sends it after the thinking)."""
        for slot in reversed(self._slots):
            if isinstance(slot, _Text) and slot.thought and slot.block == block:
                slot.signature = (slot.signature or b"") + signature
                return

    def tool_call(
        self,
        key: int | str | None,
        *,
        call_id: str | None = None,
        name: str | None = None,
        arguments: str | None = None,
        args: dict[str, object] | None = None,
    ) -> None:
        """Add a tool call or a fragment of one, keyed by its index or block (None: a whole
        call of its own); ``arguments`` is a piece of its JSON text, ``args`` its arguments
        already parsed."""
        slot = self._calls.get(key) if key is not None else None
        if slot is None:
            slot = _Call()
            if key is not None:
                self._calls[key] = slot
            self._slots.append(slot)
        slot.call_id = call_id or slot.call_id
        if name:
            # OpenAI sends the name once; llama.cpp's server repeats it in every fragment.
            slot.name = name if name.startswith(slot.name) else slot.name + name
        if arguments:
            slot.fragments.append(arguments)
        if args is not None:
            slot.args = args

    def part(self, part: types.Part) -> None:
        """Add a whole part (an image, a Gemini function call or code part)."""
        self._slots.append(part)

    def finish(self, reason: str | None) -> None:
        """The provider ended the answer (``reason`` already in Eventide's terms)."""
        self._finished = True
        self._finish_reason = reason or self._finish_reason

    def fail(self, code: str, message: str) -> None:
        """The answer arrived but is unusable (a refusal, a content filter); the first
        reason given is kept."""
        if self._error is None:
            self._error = (code, message)

    def end_with(self, response: LlmResponse) -> None:
        """The provider's own final word (an error event, a whole response object)."""
        self._ended = response

    @property
    def calls_before(self) -> int:
        """Function calls already in the history (numbers calls that come without an id)."""
        count = self._calls_before
        if not isinstance(count, int):
            # Counting walks the whole history: done only for a call without an id.
            count = self._calls_before = count()
        return count

    @property
    def ended(self) -> bool:
        """Whether :meth:`end_with` was called: nothing more is read."""
        return self._ended is not None

    def final(self) -> LlmResponse:
        """The complete response."""
        if self._ended is not None:
            return self._ended
        parts: list[types.Part] = []
        problems: list[str] = []
        missing_ids = False
        for slot in self._slots:
            if isinstance(slot, _Text):
                parts.append(_text_part("".join(slot.chunks), slot.thought, slot.signature))
            elif isinstance(slot, _Call):
                if slot.fragments or slot.args is None:
                    args, problem = json_arguments("".join(slot.fragments))
                else:
                    args, problem = slot.args, None
                if problem:
                    problems.append(f"{slot.name}: {problem}")
                missing_ids = missing_ids or not slot.call_id
                parts.append(
                    types.Part(
                        function_call=types.FunctionCall(
                            id=slot.call_id or None, name=slot.name or None, args=args
                        )
                    )
                )
            else:
                call = slot.function_call
                missing_ids = missing_ids or (call is not None and not call.id)
                parts.append(slot)
        if not self._finished:
            incomplete = problems or any(isinstance(s, _Call) and not s.name for s in self._slots)
            if not self._slots:
                return LlmResponse.from_error(empty_stream())
            if not parts or incomplete:
                return LlmResponse.from_error(
                    malformed_stream(
                        "it ended without a finish reason and without complete content"
                    )
                )
            # llama.cpp's server ends streams this way when tool_choice is set; what
            # arrived is whole, so it is used.
            _LOG.warning(
                "The model's stream ended without a finish reason; its content is complete, "
                "so it is used as the answer."
            )
        if missing_ids:
            fill_missing_call_ids(parts, calls_before=self.calls_before)
        response = LlmResponse(
            content=types.Content(role="model", parts=parts) if parts else None,
            finish_reason=self._finish_reason,
            usage_metadata=self.usage,
            grounding_metadata=self.grounding_metadata,
            model_version=self.model_version,
            turn_complete=True,
        )
        if self._error is not None:
            response.error_code, response.error_message = self._error
        elif problems:
            response.set_error(ModelBehaviorError("; ".join(problems)))
        return response


def partial_response(text: str, *, thought: bool = False) -> LlmResponse:
    """One streamed chunk of text (or of a thought)."""
    return LlmResponse(
        content=types.Content(role="model", parts=[_text_part(text, thought)]), partial=True
    )


def _text_part(text: str, thought: bool, signature: bytes | None = None) -> types.Part:
    if signature is not None:
        return types.Part(text=text, thought=thought or None, thought_signature=signature)
    return types.Part(text=text, thought=True) if thought else types.Part(text=text)


def token_usage(
    *,
    prompt: int | None,
    output: int | None,
    total: int | None = None,
    cached: int | None = None,
    thoughts: int | None = None,
) -> types.UsageMetadata:
    """Token counts in Eventide's terms; the total is the sum when the provider omits it."""
    if total is None and (prompt is not None or output is not None):
        total = (prompt or 0) + (output or 0)
    # Whole numbers or None, as the signature says: taken without validation.
    return construct_trusted(
        types.UsageMetadata,
        {
            "prompt_token_count": prompt,
            "candidates_token_count": output,
            "total_token_count": total,
            "cached_content_token_count": cached,
            "thoughts_token_count": thoughts,
        },
    )
