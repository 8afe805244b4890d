"""Does a session store answer exactly like Eventide's own? A randomized check.

:func:`check_stores_agree` runs a Hypothesis state machine: random sequences of create / get
/ list / append / delete -- stale copies, duplicate event ids, compare-and-set,
``num_recent_events``, ``after_timestamp``, scoped and ``temp:`` deltas, values every store
must refuse -- against the in-memory service (the reference) and every service given, at
once. After every step their answers (the returned session or the error's type, the
caller's copy after an append) must be equal, and at the end of each example every session
must read back the same everywhere. Eventide runs it on SQLite and PostgreSQL; a store of
your own (see :mod:`eventide.sessions.session_store`) runs it the same way::

    from eventide.sessions import SessionService
    from eventide.testing.session_differential import check_stores_agree


    def test_my_store_answers_like_eventides():
        check_stores_agree({"redis": SessionService(MyRedisStore(...))})

It needs Hypothesis (the ``testing`` extra). The budget is fixed (``examples`` x
``steps``); the seed is random unless given, printed on failure, so a failure replays with
the same ``seed``. The services are used from an event loop of the check's own and closed
at the end.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    rule,
    run_state_machine_as_test,
)

from eventide.events import Event, EventActions
from eventide.sessions.base_session_service import BaseSessionService
from eventide.sessions.in_memory_session_service import InMemorySessionService
from eventide.sessions.session import GetSessionConfig, Session

__all__ = ["check_stores_agree"]

_USERS = st.sampled_from(["u1", "u2"])
_SESSION_IDS = st.sampled_from([None, "s1", "s2", "   ", " s3 ", "s1"])
_KEYS = st.sampled_from(["k", "n", "app:motd", "user:lang", "temp:scratch", 'odd"key'])
_VALUES = st.one_of(
    st.integers(-5, 5),
    st.text(max_size=4),  # NUL included: every store must refuse it the same way
    st.none(),
    st.booleans(),
    st.lists(st.integers(0, 3), max_size=2),
    st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 3), max_size=2),
)
_DELTAS = st.dictionaries(_KEYS, _VALUES, max_size=3)


class _Handle:
    """One logical session: its id on each backend (a generated id differs per backend)."""

    def __init__(self, label: str, user_id: str, ids: dict[str, str]) -> None:
        self.label = label
        self.user_id = user_id
        self.ids = ids


class _Copy:
    """One caller-held copy of a session on each backend (possibly stale)."""

    def __init__(self, handle: _Handle, sessions: dict[str, Session]) -> None:
        self.handle = handle
        self.sessions = sessions


class SessionStoresAgree(RuleBasedStateMachine):
    """The same operations on every service give the same results as on the in-memory one."""

    # Shared by every example of one run (set by check_stores_agree): one event loop and one
    # service per store; each example works in its own app, so examples stay independent.
    loop: asyncio.AbstractEventLoop
    shared: dict[str, BaseSessionService]

    handles = Bundle("handles")
    copies = Bundle("copies")

    def __init__(self) -> None:
        super().__init__()
        self.app = f"diff_{uuid.uuid4().hex[:10]}"
        self.services = {"memory": InMemorySessionService(), **self.shared}
        self.event_ids: list[str] = []
        self.clock = 1_000.0
        self.counter = 0
        self.all_handles: list[_Handle] = []

    def teardown(self) -> None:
        """At the end of each example, every live session reads back the same everywhere."""
        for handle in self.all_handles:
            self._compare_stored(handle)

    def _compare_stored(self, handle: _Handle) -> None:
        async def call(name: str, service: BaseSessionService) -> Any:
            session = await service.get_session(
                app_name=self.app, user_id=handle.user_id, session_id=handle.ids[name]
            )
            return self._view(session, handle)

        self._agree(f"stored session {handle.label}", self._each(call))

    # --- helpers ---
    def _each(
        self, call: Callable[[str, BaseSessionService], Coroutine[Any, Any, Any]]
    ) -> dict[str, Any]:
        """Run ``call`` on every backend; an exception counts as its answer (by type)."""
        answers: dict[str, Any] = {}
        for name, service in self.services.items():
            try:
                answers[name] = ("ok", self.loop.run_until_complete(call(name, service)))
            except Exception as exc:  # the answer compared is the error's type
                answers[name] = ("error", type(exc).__name__)
        return answers

    @staticmethod
    def _agree(what: str, answers: dict[str, Any]) -> Any:
        first = answers["memory"]
        for name in list(answers)[1:]:
            assert answers[name] == first, (
                f"{what}: backends disagree\n  memory: {first!r}\n  {name}: {answers[name]!r}"
            )
        return first

    def _view(self, session: Session | None, handle: _Handle | None = None) -> Any:
        """What is compared of a session: ids replaced by the logical label."""
        if session is None:
            return None
        label = handle.label if handle is not None else self._label(session)
        has_events = bool(session.events) or session.log_position > 0
        return {
            "id": label,
            "user_id": session.user_id,
            "state": session.state,
            "events": [e.model_dump(mode="json", exclude_none=True) for e in session.events],
            # Creation time is each backend's clock; after an event it is the event's time.
            "last_update_time": session.last_update_time if has_events else None,
        }

    def _label(self, session: Session) -> str:
        for handle in self.all_handles:
            if session.user_id == handle.user_id and session.id in handle.ids.values():
                return handle.label
        return session.id

    # --- rules ---
    @initialize(target=handles)
    def create_first(self) -> _Handle:
        return self._create("u1", "first", {"k": 0, "app:motd": "hi"})

    @rule(target=handles, user_id=_USERS, session_id=_SESSION_IDS, state=_DELTAS)
    def create(self, user_id: str, session_id: str | None, state: dict[str, Any]) -> _Handle:
        return self._create(user_id, session_id, state)

    def _create(self, user_id: str, session_id: str | None, state: dict[str, Any]) -> _Handle:
        app = self.app

        async def call(_name: str, service: BaseSessionService) -> Session:
            return await service.create_session(
                app_name=app, user_id=user_id, state=dict(state), session_id=session_id
            )

        answers = self._each(call)
        self.counter += 1
        label = f"h{self.counter}"
        kinds = {kind for kind, _ in answers.values()}
        assert len(kinds) == 1, f"create: backends disagree: {answers!r}"
        if kinds == {"error"}:
            self._agree("create error", answers)
            return _Handle(label, user_id, {})
        handle = _Handle(label, user_id, {n: a[1].id for n, a in answers.items()})
        self._agree("create", {n: ("ok", self._view(a[1], handle)) for n, a in answers.items()})
        self.all_handles.append(handle)
        return handle

    @rule(
        target=copies,
        handle=handles,
        num_recent=st.sampled_from([None, 0, 1, 3]),
        after=st.sampled_from([None, 0.0, 1_002.0, 1_005.0]),
    )
    def get(self, handle: _Handle, num_recent: int | None, after: float | None) -> _Copy:
        config = (
            None
            if num_recent is None and after is None
            else GetSessionConfig(num_recent_events=num_recent, after_timestamp=after)
        )

        async def call(name: str, service: BaseSessionService) -> Session | None:
            if name not in handle.ids:
                return None
            return await service.get_session(
                app_name=self.app,
                user_id=handle.user_id,
                session_id=handle.ids[name],
                config=config,
            )

        answers = self._each(call)
        self._agree(
            "get_session",
            {
                n: (a[0], self._view(a[1], handle) if a[0] == "ok" else a[1])
                for n, a in answers.items()
            },
        )
        return _Copy(
            handle,
            {
                n: a[1]
                if a[0] == "ok" and a[1] is not None
                else Session(
                    id=handle.ids.get(n, "gone"), app_name=self.app, user_id=handle.user_id
                )
                for n, a in answers.items()
            },
        )

    @rule(
        copy=copies,
        delta=_DELTAS,
        reuse=st.booleans(),
        reuse_index=st.integers(0, 50),
        compare_and_set=st.sampled_from([None, False, True]),
        tick=st.sampled_from([0.0, 1.0, 1.0, 2.5]),
    )
    def append(
        self,
        copy: _Copy,
        delta: dict[str, Any],
        reuse: bool,
        reuse_index: int,
        compare_and_set: bool | None,
        tick: float,
    ) -> None:
        if reuse and self.event_ids:
            event_id = self.event_ids[reuse_index % len(self.event_ids)]
        else:
            event_id = f"e{len(self.event_ids)}"
            self.event_ids.append(event_id)
        self.clock += tick
        template = Event(
            id=event_id,
            author="agent",
            invocation_id="inv",
            timestamp=self.clock,
            actions=EventActions(state_delta=dict(delta)),
        )

        async def call(name: str, service: BaseSessionService) -> Any:
            event = template.model_copy(deep=True)
            await service.append_event(copy.sessions[name], event, compare_and_set=compare_and_set)
            return event.actions.state_delta

        answers = self._each(call)
        self._agree("append", answers)
        self._agree(
            "the caller's copy after append",
            {n: self._view(copy.sessions[n], copy.handle) for n in self.services},
        )
        if copy.handle in self.all_handles:
            self._compare_stored(copy.handle)

    @rule(user_id=st.sampled_from([None, "u1", "u2"]), page_size=st.sampled_from([None, 1, 2]))
    def list_sessions(self, user_id: str | None, page_size: int | None) -> None:
        async def call(_name: str, service: BaseSessionService) -> tuple[list[int], list[Any]]:
            # Sessions with generated ids sort differently on each backend: compare the page
            # sizes and the whole listing in label order.
            sizes: list[int] = []
            listed: list[Any] = []
            token: str | None = None
            while True:
                page = await service.list_sessions(
                    app_name=self.app, user_id=user_id, page_size=page_size, page_token=token
                )
                sizes.append(len(page.sessions))
                listed.extend((self._label(s), s.user_id, s.state) for s in page.sessions)
                token = page.next_page_token
                if token is None:
                    return sizes, sorted(listed, key=lambda item: item[0])

        self._agree("list_sessions", self._each(call))

    @rule(handle=consumes(handles))
    def delete(self, handle: _Handle) -> None:
        if handle in self.all_handles:
            self.all_handles.remove(handle)

        async def call(name: str, service: BaseSessionService) -> None:
            if name in handle.ids:
                await service.delete_session(
                    app_name=self.app, user_id=handle.user_id, session_id=handle.ids[name]
                )

        self._agree("delete_session", self._each(call))


def check_stores_agree(
    services: Mapping[str, BaseSessionService],
    *,
    seed: int | None = None,
    examples: int = 25,
    steps: int = 30,
    shrink: bool = True,
) -> None:
    """Check that ``services`` answer every operation exactly as the in-memory service does
    (see the module docstring), then close them.

    Args:
        services: the services to check, by a name for messages (not ``memory``: that is
            the reference's). Fresh services, not yet used from any event loop.
        seed: Hypothesis's seed; random when None (printed if the check fails).
        examples: how many random sequences.
        steps: the most operations in one sequence.
        shrink: look for a shorter failing sequence after a failure (slow with a
            networked store).

    Raises:
        AssertionError: two stores answered differently (the message shows both answers;
            Hypothesis prints the steps that led there).
        ValueError: a service is named ``memory``.
    """
    if "memory" in services:
        raise ValueError("'memory' names the in-memory reference; give your services other names.")
    run_seed = random.randrange(2**32) if seed is None else seed
    phases = [Phase.explicit, Phase.reuse, Phase.generate] + ([Phase.shrink] if shrink else [])
    loop = asyncio.new_event_loop()
    SessionStoresAgree.loop = loop
    SessionStoresAgree.shared = dict(services)
    machine = hypothesis_seed(run_seed)(SessionStoresAgree)
    try:
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=examples,
                stateful_step_count=steps,
                deadline=None,
                database=None,
                print_blob=True,
                # No "explain" phase: it traces every line, far too slow with several stores.
                phases=phases,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
            ),
        )
    except BaseException:
        print(f"The stores disagreed with seed {run_seed}: pass seed={run_seed} to replay it.")
        raise
    finally:
        for service in services.values():
            loop.run_until_complete(service.close())
        loop.close()
