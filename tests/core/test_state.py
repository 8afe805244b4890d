"""State: scoped, delta-recording view with dirty reads."""

from __future__ import annotations

import enum

import pytest

from eventide import State
from eventide.errors import InvalidStateValueError
from eventide.state import check_json_value


def test_reads_see_own_delta_then_pending_then_committed() -> None:
    """Spec "Dirty Reads": a write is visible at once to later reads in the invocation,
    before it is committed; committed values show through otherwise."""
    committed = {"a": 1, "b": 2}
    pending: dict[str, object] = {"b": 20}
    delta: dict[str, object] = {}
    state = State(committed, delta, pending)
    assert state["a"] == 1 and state["b"] == 20
    state["a"] = 100
    assert state["a"] == 100
    assert delta == {"a": 100} and pending == {"b": 20, "a": 100}
    assert committed == {"a": 1, "b": 2}, "writes never touch committed state directly"
    other = State(committed, {}, pending)  # another context in the same invocation
    assert other["a"] == 100, "dirty read across contexts"


def test_writes_record_the_delta_for_the_next_event() -> None:
    """Spec "Cómo se Registran los Cambios de Estado": writes populate state_delta."""
    delta: dict[str, object] = {}
    state = State({}, delta)
    state["user:lang"] = "fr"
    state.update({"temp:x": 1}, app_flag=True)
    assert delta == {"user:lang": "fr", "temp:x": 1, "app_flag": True}
    assert state.has_delta()
    assert state.to_dict() == delta
    assert "user:lang" in state and "missing" not in state
    assert state.get("missing", 7) == 7
    assert state.setdefault("n", 3) == 3 and delta["n"] == 3


def test_missing_key_and_delete() -> None:
    """Reading a missing key raises KeyError; keys cannot be deleted (set None instead)."""
    state = State({}, {})
    with pytest.raises(KeyError):
        state["nope"]
    with pytest.raises(TypeError, match="Set the key to None"):
        del state["nope"]


@pytest.mark.parametrize(
    "value, path",
    [
        (object(), "$"),
        ({"a": [1, {2: 3}]}, "$.a[1][2]"),
        ({"x": {1, 2}}, "$.x"),
        (float("nan"), "$"),
    ],
)
def test_non_json_values_are_rejected_with_their_path(value: object, path: str) -> None:
    """Bad input: a non-JSON state value gets a clear error naming the key and the path."""
    with pytest.raises(InvalidStateValueError) as info:
        check_json_value("k", value)
    assert info.value.key == "k" and info.value.path == path
    assert "model_dump" in str(info.value)


def test_json_values_pass() -> None:
    check_json_value("k", {"a": [1, 2.5, "x", None, True, {"b": []}]})


def test_scalars_pass_by_exact_type_and_by_subclass() -> None:
    """The exact-type shortcut (int, bool, None) and the isinstance checks behind it agree:
    subclasses of str and int pass, a NUL in the key is refused whatever the value, and a
    float still goes through the finiteness check."""

    class Level(enum.IntEnum):
        HIGH = 2

    class Name(str):
        pass

    for value in (1, True, None, Level.HIGH, Name("x"), "x", 2.5):
        check_json_value("k", value)
    for key, value in (("k\x00", 1), ("k\x00", None), ("k", Name("a\x00")), ("k", float("inf"))):
        with pytest.raises(InvalidStateValueError):
            check_json_value(key, value)
