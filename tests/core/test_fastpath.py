"""Issue 32: the speed tricks are fenced in ``eventide._fastpath``, and each keeps its rule."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import eventide
from eventide._fastpath import LentList, hidden_value, set_hidden
from eventide.errors import ModelError
from eventide.events import Event
from eventide.models.llm_response import LlmResponse
from eventide.sessions.session import Session

SRC = Path(eventide.__file__).parent

# The one known use outside the fence: a vars() that reads a class, not a record.
_OWNED_ELSEWHERE = {
    "agents/base_agent.py": "vars",  # a class's own namespace (its MRO), not a record's
}


def _bypasses(path: Path) -> list[str]:
    """The pydantic and reference-count bypasses in ``path``'s code (docstrings aside)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Attribute) and node.attr in {"__dict__", "getrefcount"}:
            found.append(node.attr)
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "__setattr__"
            and isinstance(node.value, ast.Name)
            and node.value.id == "object"
        ):
            found.append("object.__setattr__")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "vars"
            and node.args
        ):
            found.append("vars")
    return found


def test_every_pydantic_bypass_lives_in_the_fastpath_module() -> None:
    """Issue 32 rule "the speed tricks fenced": no module but ``_fastpath`` writes or reads a
    model's ``__dict__``, calls ``object.__setattr__`` or counts references (the three
    modules other developers own aside, each with its one known bypass)."""
    offenders: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        name = path.relative_to(SRC).as_posix()
        if name == "_fastpath.py":
            continue
        found = [kind for kind in _bypasses(path) if _OWNED_ELSEWHERE.get(name) != kind]
        if found:
            offenders[name] = found
    assert offenders == {}
    # The check itself can fail: the fenced module's own bypasses are found.
    assert {"object.__setattr__", "vars"} <= set(_bypasses(SRC / "_fastpath.py"))


class _Owner:
    def __init__(self, items: LentList[int]) -> None:
        self.items = items


def test_lent_list_is_held_elsewhere_only_while_a_borrower_refers_to_it() -> None:
    """Issue 32, LentList's rule: taken back only when nobody but its owner holds it."""
    # Each answer is taken in a statement of its own: pytest's rewritten asserts keep
    # references to the values they show.
    owner = _Owner(LentList([1, 2]))
    alone = owner.items.held_elsewhere()
    borrower = owner.items
    lent = owner.items.held_elsewhere()
    del borrower
    returned = owner.items.held_elsewhere()
    assert (alone, lent, returned) == (False, True, False)


def test_lent_list_notes_every_change_but_appending() -> None:
    """Issue 32, LentList's rule: only a list its borrower just appended to is taken back."""
    changes: dict[str, Callable[[LentList[int]], object]] = {
        "setitem": lambda x: x.__setitem__(0, 9),
        "setslice": lambda x: x.__setitem__(slice(0, 1), [9]),
        "delitem": lambda x: x.__delitem__(0),
        "imul": lambda x: x.__imul__(2),
        "insert": lambda x: x.insert(0, 9),
        "pop": lambda x: x.pop(),
        "remove": lambda x: x.remove(1),
        "clear": lambda x: x.clear(),
        "reverse": lambda x: x.reverse(),
        "sort": lambda x: x.sort(),
    }
    noted: dict[str, bool] = {}
    for name, change in changes.items():
        items = LentList([1, 2, 3])
        change(items)
        noted[name] = items.changed
    assert noted == dict.fromkeys(changes, True)
    items = LentList([1, 2])
    items.append(3)
    items.extend([4, 5])
    items += [6]
    assert not items.changed
    items.drop_appended(2)
    assert items == [1, 2] and not items.changed


def test_a_commit_record_sets_the_session_copy_fields() -> None:
    """Issue 32: recording a commit (plain assignments now) updates the copy's fields."""
    session = Session(id="s", app_name="a", user_id="u", events=[], last_update_time=1.0)
    event = Event(author="user", invocation_id="i", timestamp=5.0)
    session.record_commit(event, 7)
    assert (session.events, session.last_update_time, session.log_position) == ([event], 5.0, 7)
    assert session.model_dump()["last_update_time"] == 5.0


def test_a_hidden_value_is_no_field() -> None:
    """Issue 32, set_hidden's rule: the value rides on the record, never in its JSON or its
    equality."""
    response = LlmResponse.from_error(ModelError("quota", error_code="RATE_LIMITED"))
    plain = LlmResponse(turn_complete=True, error_code="RATE_LIMITED", error_message="quota")
    assert isinstance(response.error, ModelError)
    assert hidden_value(plain, "_error") is None
    assert "_error" not in response.model_dump()
    assert response.model_dump() == plain.model_dump()
    set_hidden(plain, "_mark", 1)
    assert hidden_value(plain, "_mark") == 1


def test_event_init_is_not_rerun_when_stored_events_are_validated() -> None:
    """``Event.__init__`` only expands the ``message=``/``state=`` shorthands: pydantic is told
    not to run it for ``model_validate_json`` (it would validate every stored event twice),
    while construction still expands them and stored JSON still round-trips."""
    from eventide import Event

    assert Event.__pydantic_custom_init__ is False
    event = Event(author="a", message="hi", state={"k": 1})
    assert (event.text, event.actions.state_delta) == ("hi", {"k": 1})
    assert Event.model_validate_json(event.model_dump_json()) == event
