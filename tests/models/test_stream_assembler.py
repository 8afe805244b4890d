"""The assembler every connector feeds: a whole response read in one go, and call ids."""

from __future__ import annotations

from eventide.models._stream_assembler import StreamAssembler


def _feed(assembler: StreamAssembler) -> list[object]:
    partials: list[object] = [
        assembler.text("Let me think.", thought=True, signature=b"sig"),
        assembler.text("Hello"),
        assembler.text(" there"),
    ]
    assembler.tool_call(0, call_id="call_a", name="get_weather", arguments='{"city": "Paris"}')
    assembler.finish("STOP")
    return partials


def test_a_whole_response_builds_no_partials_and_the_same_answer() -> None:
    streamed, whole = (
        StreamAssembler(calls_before=0),
        StreamAssembler(calls_before=0, partials=False),
    )
    assert all(p is not None for p in _feed(streamed))
    assert _feed(whole) == [None, None, None]
    assert whole.final() == streamed.final()


def test_history_is_counted_only_for_a_call_without_an_id() -> None:
    counted: list[int] = []

    def count() -> int:
        counted.append(1)
        return 4

    with_ids = StreamAssembler(calls_before=count)
    _feed(with_ids)
    with_ids.final()
    assert counted == []

    without_id = StreamAssembler(calls_before=count)
    without_id.tool_call(0, name="a", arguments="{}")
    without_id.tool_call(1, call_id="given", name="b", arguments="{}")
    without_id.tool_call(2, name="c", arguments="{}")
    without_id.finish("STOP")
    content = without_id.final().content
    assert content is not None and content.parts is not None
    ids = [p.function_call.id for p in content.parts if p.function_call is not None]
    # Numbered after the history's four calls, by position; the given id is kept.
    assert ids == ["call_5", "given", "call_7"]
    assert counted == [1]
