"""Content types: Gemini JSON shape; google.genai objects accepted by value."""

from __future__ import annotations

from eventide import types
from eventide._model import snake_case_keys


def test_content_json_shape_matches_gemini() -> None:
    """Issue 2: same field names and JSON shape as the Gemini API content model."""
    content = types.Content(
        role="model",
        parts=[
            types.Part(text="thinking", thought=True),
            types.Part(function_call=types.FunctionCall(id="1", name="f", args={"a": 1})),
            types.Part(
                file_data=types.FileData(file_uri="gs://b/x.pdf", mime_type="application/pdf")
            ),
            types.Part(executable_code=types.ExecutableCode(code="print(1)", language="PYTHON")),
        ],
    )
    assert content.to_json_dict() == {
        "role": "model",
        "parts": [
            {"text": "thinking", "thought": True},
            {"function_call": {"id": "1", "name": "f", "args": {"a": 1}}},
            {"file_data": {"file_uri": "gs://b/x.pdf", "mime_type": "application/pdf"}},
            {"executable_code": {"code": "print(1)", "language": "PYTHON"}},
        ],
    }
    assert content.text is None  # thought text is not the answer


def test_google_genai_objects_are_converted_by_value() -> None:
    """Issue 2: objects from google.genai.types are accepted wherever Eventide takes content."""
    from google.genai import types as genai

    theirs = genai.Content(
        role="user",
        parts=[
            genai.Part(text="hi"),
            genai.Part(
                function_response=genai.FunctionResponse(id="9", name="f", response={"ok": 1})
            ),
        ],
    )
    ours = types.to_content(theirs)
    assert isinstance(ours, types.Content)
    assert ours.parts is not None and ours.parts[0].text == "hi"
    assert ours.parts[1].function_response == types.FunctionResponse(
        id="9", name="f", response={"ok": 1}
    )
    config = types.GenerateContentConfig.model_validate(
        genai.GenerateContentConfig(temperature=0.2, system_instruction="be brief")
    )
    assert config.temperature == 0.2 and config.system_instruction == "be brief"


def test_to_content_from_string() -> None:
    """A plain string becomes a one-part user message."""
    assert types.to_content("hello") == types.Content(role="user", parts=[types.Part(text="hello")])


def test_camel_case_front_end_json_is_accepted() -> None:
    """JSON from front ends writing camelCase parses after snake_case_keys, without renaming
    data inside args/state."""
    data = snake_case_keys(
        {"role": "user", "parts": [{"functionCall": {"name": "f", "args": {"someArg": 1}}}]}
    )
    content = types.Content.model_validate(data)
    assert content.parts is not None
    assert content.parts[0].function_call == types.FunctionCall(name="f", args={"someArg": 1})


def test_usage_metadata_equals_google_genais_record_of_the_same_counts() -> None:
    """google-genai calls the record ``GenerateContentResponseUsageMetadata``: an Eventide
    ``UsageMetadata`` equals one with the same counts (as Eventide's ``Content`` equals
    google-genai's), so code comparing what a model reported keeps working; before, the
    different class name made them unequal."""
    from google.genai import types as genai_types

    ours = types.UsageMetadata(prompt_token_count=10, candidates_token_count=5)
    assert ours == genai_types.GenerateContentResponseUsageMetadata(
        prompt_token_count=10, candidates_token_count=5
    )
    assert ours != genai_types.GenerateContentResponseUsageMetadata(prompt_token_count=11)
