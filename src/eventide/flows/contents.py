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
- ``include_contents='none'`` keeps only the current turn: from the last message of the user
  or of another agent on (a transfer to this agent does not start a turn), as google-adk.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from eventide import types
from eventide._fastpath import construct_trusted, fields_of
from eventide.events import Event
from eventide.flows.task_scope import task_scope
from eventide.history.model_view import extend_view
from eventide.models.llm_request import Conversation
from eventide.protocol import SYNTHETIC_FUNCTIONS, TRANSFER_TO_AGENT, USER_AUTHOR

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
                event.content is not None
                and (
                    event.author == USER_AUTHOR
                    or (event.author != agent_name and not _is_transfer(event))
                )
                and _on_branch(event.branch, branch)
            ):
                start = i
                break
        events = events[start:]
    builder = ContentsBuilder(agent_name=agent_name, branch=branch)
    for event in events:
        builder.add(event)
    return builder.contents()


def _is_transfer(event: Event) -> bool:
    """A transfer between agents (its call or its answer): not the start of a turn."""
    if event.actions.transfer_to_agent:
        return True
    parts = event.content.parts if event.content is not None else None
    return any(
        part.function_call is not None and part.function_call.name == TRANSFER_TO_AGENT
        for part in parts or ()
    )


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
        "_shared",
        "_stale",
        "_translations",
    )

    def __init__(
        self,
        *,
        agent_name: str,
        branch: str | None,
        shared: dict[str, tuple[types.Content, types.Content]] | None = None,
    ) -> None:
        self._agent_name = agent_name
        self._branch = branch
        # What the builders of one view made of events they did not author (see ``add``):
        # event id -> (the event's content, what was made of it), the same for every agent
        # but its author. (The event's content, not the event: a cached session keeps no
        # event alive.)
        self._shared = shared
        self._blocks: list[_Block] = []
        self._call_block: dict[str, _Block] = {}
        self._flat: list[types.Content] = []
        self._stale = False
        # The block whose call the latest event answered, when that event added nothing else.
        self._answered_last: _Block | None = None
        # What connectors made of the conversation handed out, while it only grows.
        self._translations: dict[str, Any] = {}

    def add(self, event: Event) -> None:
        """Fold one committed event into the conversation."""
        fields = fields_of(event)  # four reads: one lookup, not four generic ones
        content = fields["content"]
        if content is None:
            return
        parts = content.parts
        if not parts or not _on_branch(fields["branch"], self._branch):
            return
        author = fields["author"]
        shared = self._shared if author != self._agent_name else None
        if shared is not None:
            made = shared.get(fields["id"])
            if made is not None and made[0] is content:
                main = made[1]
                self._answered_last = None
                self._blocks.append(_Block(author=author, main=main))
                self._flat.append(main)
                return
        in_place: list[types.Part] = []
        answered: _Block | None = None
        # Whether a kept part is a call or a response (noted here, not in later passes).
        calls = responses = False
        for part in parts:
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
        if author != USER_AUTHOR and author != self._agent_name:
            main = _as_context(author, in_place)
        elif author == USER_AUTHOR or responses:
            main = _content("user", in_place)
        else:
            main = _content("model", in_place)
        block = _Block(author=author, main=main)
        self._blocks.append(block)
        self._flat.append(main)
        if shared is not None and not calls and not responses and len(in_place) == len(parts):
            # Nothing in it depends on this builder's calls: every other agent makes the same.
            shared[fields["id"]] = (content, main)
        if calls:
            for part in in_place:
                if part.function_call is not None and part.function_call.id:
                    self._call_block[part.function_call.id] = block

    def _refresh_answer(self, block: _Block) -> None:
        parts = list(block.answers.values())
        if block.author not in (USER_AUTHOR, self._agent_name):
            answer = _as_context(block.author, parts)
        else:
            answer = _content("user", parts)
        if block.answer is None and self._blocks and self._blocks[-1] is block:
            self._flat.append(answer)  # the usual case: the answer follows its call
        else:
            self._stale = True
        block.answer = answer

    def contents(self) -> Conversation:
        """The conversation so far (a new list the caller may change), with the connectors'
        translations of what it was last time when it only grew since (see
        :class:`~eventide.models.llm_request.Conversation`)."""
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
            # A one-off the next call does not extend: what was translated is void.
            self._translations = {}
            return Conversation(cut, {})
        if self._stale:
            flat: list[types.Content] = []
            for block in self._blocks:
                flat.append(block.main)
                if block.answer is not None:
                    flat.append(block.answer)
            self._flat = flat
            self._stale = False
            self._translations = {}  # rewritten, not extended
        return Conversation(self._flat, self._translations)


class _Block:
    __slots__ = ("answer", "answers", "author", "main")

    def __init__(self, *, author: str, main: types.Content) -> None:
        self.author = author
        self.main = main
        self.answer: types.Content | None = None
        self.answers: dict[str, types.Part] = {}


class ContentsCache:
    """The Runner's conversation cache: the one cache on the model path (runtime state: it
    lives on the Runner and reaches the flow through the invocation context).

    Per session it keeps the model's view of the events (rewound turns left out, compacted
    ones summarised: see :mod:`eventide.history.model_view`) and one conversation builder per
    agent and branch reading that view, so a model call costs only the events committed
    since the last one. The builders share what they make of an event none of them calls
    or answers in and that they did not author (a user message, another agent's words as
    context): a pipeline of agents builds each earlier message once, not once per agent.

    Validity rule, the only one: an entry serves a session's events while they begin with the
    events it has seen (at least as many; the same first event and the same event at the
    last position it saw, by id); the events after those are folded in. Otherwise the entry
    is dropped and built again from the whole log. Within an entry, what is derived from the
    view only grows with it: when a rewind or a compaction rewrites the view instead, the
    builders are dropped and rebuilt from the new view. Least recently used sessions are
    dropped past ``max_sessions``.
    """

    __slots__ = ("_entries", "_max")

    def __init__(self, max_sessions: int = 1024) -> None:
        self._entries: OrderedDict[str, _SessionEntry] = OrderedDict()
        self._max = max_sessions

    def view(self, session_id: str, events: Sequence[Event]) -> Sequence[Event]:
        """The session's model view (see :mod:`eventide.history.model_view`), kept current."""
        view = self._entry(session_id, events).view
        return events if view is None else view

    def contents(
        self, session_id: str, events: Sequence[Event], *, agent_name: str, branch: str | None
    ) -> list[types.Content]:
        """The conversation for ``events``, reusing the work done for their prefix."""
        entry = self._entry(session_id, events)
        view = events if entry.view is None else entry.view
        key = (branch, agent_name)
        conversation = entry.conversations.get(key)
        if conversation is None:
            builder = ContentsBuilder(agent_name=agent_name, branch=branch, shared=entry.shared)
            conversation = entry.conversations[key] = _Conversation(builder)
        builder = conversation.builder
        for index in range(conversation.seen, len(view)):
            builder.add(view[index])
        conversation.seen = len(view)
        return builder.contents()

    def _entry(self, session_id: str, events: Sequence[Event]) -> _SessionEntry:
        """The session's entry, brought up to ``events`` (see the validity rule)."""
        entry = self._entries.get(session_id)
        seen = entry.seen if entry is not None else 0
        if (
            entry is None
            or len(events) < seen
            or (seen and (events[0].id != entry.first_id or events[seen - 1].id != entry.last_id))
        ):
            entry = self._entries[session_id] = _SessionEntry()
            seen = 0
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(session_id)
        if len(events) > seen:
            entry.view, appended_only = extend_view(entry.view, events, seen)
            if not appended_only:
                entry.conversations.clear()
                entry.shared.clear()
            entry.seen = len(events)
            entry.first_id = events[0].id
            entry.last_id = events[-1].id
        return entry


class _SessionEntry:
    """One session's cached view (None: the log is its own view), conversations, and the
    contents its builders share (see :meth:`ContentsBuilder.add`)."""

    __slots__ = ("conversations", "first_id", "last_id", "seen", "shared", "view")

    def __init__(self) -> None:
        self.view: list[Event] | None = None
        self.conversations: dict[tuple[str | None, str], _Conversation] = {}
        self.shared: dict[str, tuple[types.Content, types.Content]] = {}
        self.seen = 0
        self.first_id = ""
        self.last_id = ""


class _Conversation:
    """One agent's conversation in one branch, built from the first ``seen`` view events."""

    __slots__ = ("builder", "seen")

    def __init__(self, builder: ContentsBuilder) -> None:
        self.builder = builder
        self.seen = 0


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
    lines: list[types.Part] = [_text("For context:")]
    for part in parts:
        if part.thought:
            continue
        if part.text:
            lines.append(_text(f"[{author}] said: {part.text}"))
        elif part.function_call is not None:
            call = part.function_call
            lines.append(
                _text(
                    f"[{author}] called tool `{call.name}` with parameters: "
                    f"{json.dumps(call.args or {}, default=str)}"
                )
            )
        elif part.function_response is not None:
            response = part.function_response
            lines.append(
                _text(
                    f"[{author}] `{response.name}` tool returned result: "
                    f"{json.dumps(response.response or {}, default=str)}"
                )
            )
        else:
            lines.append(part)
    return _content("user", lines)


# The conversation's records are built from parts already validated (the committed events')
# and strings made here: validating them again checks nothing (two to three microseconds a
# record, several per event another agent authored).
def _text(text: str) -> types.Part:
    return construct_trusted(types.Part, {"text": text})


def _content(role: str, parts: list[types.Part]) -> types.Content:
    """A content of ``parts`` (a list of the caller's own, not shared)."""
    return construct_trusted(types.Content, {"role": role, "parts": parts})
