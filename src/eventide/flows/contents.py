"""Building the model's conversation (``LlmRequest.contents``) from the session's events.

Rules:
- Only events of this agent's branch and its ancestors' are included (a parallel sibling's
  work stays invisible), and only events with content. An agent outside any fan-out sees
  every branch's events (it gathers their work).
- The user's messages keep role 'user'; this agent's own events keep their roles; events of
  other agents are presented as context, in a user-role message ("For context: [name] said:
  ...") so the model does not mistake them for its own words.
- Every function call is immediately followed by its response; when a call was answered more
  than once (a long-running tool's update, a confirmed re-run), the latest answer is used.
  When the latest event answers an earlier call (a long-running tool's real result), the
  conversation ends at that call and its answer: what came in between (the model's reply to
  the pending result) is left out of this request, as google-adk does.
- Requests for user input the runtime synthesized (confirmations, credentials) are left out.
- ``include_contents='none'`` keeps only the current turn: from the last user message on.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence

from eventide import types
from eventide.events import Event
from eventide.flows.task_scope import task_scope
from eventide.history.model_view import ModelViewCache
from eventide.protocol import SYNTHETIC_FUNCTIONS, USER_AUTHOR

__all__ = ["ContentsBuilder", "ContentsCache", "build_contents"]


def build_contents(
    events: Sequence[Event],
    *,
    agent_name: str,
    branch: str | None,
    current_turn_only: bool = False,
) -> list[types.Content]:
    """The conversation for ``agent_name``'s next model call (built from scratch)."""
    if current_turn_only:
        start = 0
        for i in range(len(events) - 1, -1, -1):
            event = events[i]
            if (
                event.author == USER_AUTHOR
                and event.content is not None
                and _on_branch(event.branch, branch)
            ):
                start = i
                break
        events = events[start:]
    builder = ContentsBuilder(agent_name=agent_name, branch=branch)
    for event in events:
        builder.add(event)
    return builder.contents()


class ContentsBuilder:
    """Builds the conversation one event at a time, so a long session costs only its new
    events per model call (see :class:`ContentsCache`).

    The conversation is a list of blocks; a block is the content made from one event plus,
    when that event called functions, the content holding their (latest) answers.
    """

    __slots__ = (
        "_agent_name",
        "_answered_last",
        "_blocks",
        "_branch",
        "_call_block",
        "_flat",
        "_stale",
    )

    def __init__(self, *, agent_name: str, branch: str | None) -> None:
        self._agent_name = agent_name
        self._branch = branch
        self._blocks: list[_Block] = []
        self._call_block: dict[str, _Block] = {}
        self._flat: list[types.Content] = []
        self._stale = False
        # The block whose call the latest event answered, when that event added nothing else.
        self._answered_last: _Block | None = None

    def add(self, event: Event) -> None:
        """Fold one committed event into the conversation."""
        content = event.content
        if content is None or not content.parts or not _on_branch(event.branch, self._branch):
            return
        in_place: list[types.Part] = []
        answered: _Block | None = None
        # Whether a kept part is a call or a response (noted here, not in later passes).
        calls = responses = False
        for part in content.parts:
            call = part.function_call
            response = part.function_response
            if call is not None:
                if call.name in SYNTHETIC_FUNCTIONS:
                    continue
                calls = True
            elif response is not None:
                if response.name in SYNTHETIC_FUNCTIONS:
                    continue
                block = self._call_block.get(response.id or "")
                if block is not None:
                    # An answer goes right after its call; a later answer replaces it.
                    block.answers[response.id or ""] = part
                    self._refresh_answer(block)
                    answered = block
                    continue
                responses = True
            in_place.append(part)
        if not in_place:
            if answered is not None:
                self._answered_last = answered
            return
        self._answered_last = None
        author = event.author
        if author != USER_AUTHOR and author != self._agent_name:
            main = _as_context(author, in_place)
        elif author == USER_AUTHOR or responses:
            main = types.Content(role="user", parts=in_place)
        else:
            main = types.Content(role="model", parts=in_place)
        block = _Block(author=author, main=main)
        self._blocks.append(block)
        self._flat.append(main)
        if calls:
            for part in in_place:
                if part.function_call is not None and part.function_call.id:
                    self._call_block[part.function_call.id] = block

    def _refresh_answer(self, block: _Block) -> None:
        parts = list(block.answers.values())
        if block.author not in (USER_AUTHOR, self._agent_name):
            answer = _as_context(block.author, parts)
        else:
            answer = types.Content(role="user", parts=parts)
        if block.answer is None and self._blocks and self._blocks[-1] is block:
            self._flat.append(answer)  # the usual case: the answer follows its call
        else:
            self._stale = True
        block.answer = answer

    def contents(self) -> list[types.Content]:
        """The conversation so far (a new list the caller may change)."""
        answered = self._answered_last
        if answered is not None and self._blocks[-1] is not answered:
            # The latest event answers an earlier call: end the conversation there.
            cut: list[types.Content] = []
            for block in self._blocks:
                cut.append(block.main)
                if block.answer is not None:
                    cut.append(block.answer)
                if block is answered:
                    break
            return cut
        if self._stale:
            flat: list[types.Content] = []
            for block in self._blocks:
                flat.append(block.main)
                if block.answer is not None:
                    flat.append(block.answer)
            self._flat = flat
            self._stale = False
        return list(self._flat)


class _Block:
    __slots__ = ("answer", "answers", "author", "main")

    def __init__(self, *, author: str, main: types.Content) -> None:
        self.author = author
        self.main = main
        self.answer: types.Content | None = None
        self.answers: dict[str, types.Part] = {}


class ContentsCache:
    """A Runner's memo of built conversations, keyed by session, branch and agent (runtime
    state: it lives on the Runner and reaches the flow through the invocation context).

    A cached builder is reused when the session's events still start with the events it
    has seen (checked by the ids of the first and last of them); otherwise it is rebuilt.
    Least recently used entries are dropped past ``max_sessions``. The conversation is built
    from the session's model view (rewound turns left out, compacted ones summarised: see
    :mod:`eventide.history.model_view`).
    """

    __slots__ = ("_entries", "_max", "_views")

    def __init__(self, max_sessions: int = 1024) -> None:
        self._entries: OrderedDict[tuple[str, str | None, str], _CacheEntry] = OrderedDict()
        self._max = max_sessions
        self._views = ModelViewCache(max_sessions)

    def view(self, session_id: str, events: Sequence[Event]) -> Sequence[Event]:
        """The session's model view (see :mod:`eventide.history.model_view`), kept current."""
        return self._views.view(session_id, events)[0]

    def contents(
        self, session_id: str, events: Sequence[Event], *, agent_name: str, branch: str | None
    ) -> list[types.Content]:
        """The conversation for ``events``, reusing the work done for their prefix."""
        events, generation = self._views.view(session_id, events)
        key = (session_id, branch, agent_name)
        entry = self._entries.get(key)
        seen = entry.seen if entry is not None else 0
        if (
            entry is None
            or entry.generation != generation
            or len(events) < seen
            or (seen and (events[0].id != entry.first_id or events[seen - 1].id != entry.last_id))
        ):
            entry = _CacheEntry(ContentsBuilder(agent_name=agent_name, branch=branch), generation)
            seen = 0
            self._entries[key] = entry
        else:
            self._entries.move_to_end(key)
        builder = entry.builder
        for i in range(seen, len(events)):
            builder.add(events[i])
        if events:
            entry.seen = len(events)
            entry.first_id = events[0].id
            entry.last_id = events[-1].id
        while len(self._entries) > self._max:
            self._entries.popitem(last=False)
        return builder.contents()


class _CacheEntry:
    __slots__ = ("builder", "first_id", "generation", "last_id", "seen")

    def __init__(self, builder: ContentsBuilder, generation: int) -> None:
        self.builder = builder
        self.generation = generation
        self.seen = 0
        self.first_id = ""
        self.last_id = ""


def _on_branch(event_branch: str | None, branch: str | None) -> bool:
    """Whether an event of ``event_branch`` is visible from ``branch``.

    An agent outside any fan-out (no branch) sees every branch's events: a step after a
    ``ParallelAgent`` gathers its branches' work. Inside a branch, only that branch and its
    ancestors are visible. A delegated task's scope is closed both ways (see
    :mod:`eventide.flows.task_scope`).
    """
    if not event_branch and not branch:
        return True  # the common case: no fan-out, no delegated task
    if task_scope(event_branch) != task_scope(branch):
        return False  # a delegated task's events stay in its scope (flows/task_scope.py)
    if not event_branch or not branch or event_branch == branch:
        return True
    return branch.startswith(event_branch + ".")


def _as_context(author: str, parts: Sequence[types.Part]) -> types.Content:
    lines: list[types.Part] = [types.Part(text="For context:")]
    for part in parts:
        if part.thought:
            continue
        if part.text:
            lines.append(types.Part(text=f"[{author}] said: {part.text}"))
        elif part.function_call is not None:
            call = part.function_call
            lines.append(
                types.Part(
                    text=f"[{author}] called tool `{call.name}` with parameters: "
                    f"{json.dumps(call.args or {}, default=str)}"
                )
            )
        elif part.function_response is not None:
            response = part.function_response
            lines.append(
                types.Part(
                    text=f"[{author}] `{response.name}` tool returned result: "
                    f"{json.dumps(response.response or {}, default=str)}"
                )
            )
        else:
            lines.append(part)
    return types.Content(role="user", parts=lines)
