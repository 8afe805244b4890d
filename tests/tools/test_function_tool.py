"""FunctionTool: declarations inferred from signatures, argument validation, results."""

from __future__ import annotations

import functools
from typing import Literal

import pytest
from pydantic import BaseModel

from eventide import FunctionTool, ToolContext
from eventide.tools.function_tool import ToolArgumentsError, wrap_result


class Address(BaseModel):
    city: str
    zip_code: str | None = None


def ship(
    item: str,
    quantity: int,
    address: Address,
    speed: Literal["standard", "express"] = "standard",
    tool_context: ToolContext | None = None,
) -> dict[str, object]:
    """Ship an item to an address.

    Longer explanation that is part of the description.

    Args:
        item: the product's SKU.
        quantity: how many, at least one.
            Continued on a second line.
        address: where to ship.
        speed: shipping speed.

    Returns:
        A shipment record.
    """
    return {"item": item, "quantity": quantity, "city": address.city, "speed": speed}


def test_declaration_from_signature_and_docstring() -> None:
    """Issue 3: the declaration comes from type hints, defaults and the Google-style docstring;
    tool_context is hidden from the model."""
    declaration = FunctionTool(ship).get_declaration()
    assert declaration.name == "ship"
    assert declaration.description == (
        "Ship an item to an address.\n\nLonger explanation that is part of the description."
    )
    schema = declaration.parameters_json_schema
    assert schema is not None
    assert schema["required"] == ["item", "quantity", "address"]
    assert set(schema["properties"]) == {"item", "quantity", "address", "speed"}
    assert schema["properties"]["quantity"] == {
        "type": "integer",
        "description": "how many, at least one. Continued on a second line.",
    }
    assert schema["properties"]["speed"]["enum"] == ["standard", "express"]
    assert "Address" in schema["$defs"]


def test_arguments_are_validated_and_converted() -> None:
    """Arguments are converted to the annotated types (nested models included)."""
    tool = FunctionTool(ship)
    args = tool.validate_args({"item": "A1", "quantity": "2", "address": {"city": "Oslo"}})
    assert args["quantity"] == 2 and isinstance(args["address"], Address)
    assert args["speed"] == "standard"


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ({"item": "A1", "quantity": 1, "address": {}}, "address.city: Field required"),
        ({"item": "A1", "quantity": 1, "address": {"city": "x"}, "speed": "warp"}, "speed"),
    ],
)
def test_invalid_arguments_name_the_problem(bad: dict[str, object], fragment: str) -> None:
    """Bad input: invalid arguments give an error naming the field, for the model to fix."""
    with pytest.raises(ToolArgumentsError, match="Invalid arguments for tool 'ship'") as info:
        FunctionTool(ship).validate_args(bad)
    assert fragment in str(info.value)


def test_invented_arguments_are_dropped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    """Issue 14 (google-adk's behaviour): arguments the model invents that the function
    lacks are dropped, with a logged warning naming them; the rest is validated as usual."""
    with caplog.at_level("WARNING", logger="eventide.tools.function_tool"):
        args = FunctionTool(ship).validate_args(
            {"item": "A1", "quantity": 1, "address": {"city": "x"}, "gift_wrap": True}
        )
    assert "gift_wrap" not in args and args["item"] == "A1"
    assert "dropped argument(s) 'gift_wrap'" in caplog.text


def test_tool_context_is_found_by_annotation() -> None:
    """Issue 14: a parameter annotated ToolContext receives the context whatever its name,
    and is not declared to the model."""

    def note(text: str, ctx: ToolContext) -> str:
        return text

    declaration = FunctionTool(note).get_declaration()
    assert declaration.parameters_json_schema is not None
    assert set(declaration.parameters_json_schema["properties"]) == {"text"}


def test_results_are_wrapped() -> None:
    """A non-dict result is wrapped as {"result": value}; pydantic models are dumped."""
    assert wrap_result(3) == {"result": 3}
    assert wrap_result(None) == {"result": None}
    assert wrap_result({"a": 1}) == {"a": 1}
    assert wrap_result(Address(city="Oslo")) == {"city": "Oslo", "zip_code": None}


def test_overrides_and_unannotated_parameters() -> None:
    def legacy(a, b=2):  # type: ignore[no-untyped-def]
        return a

    tool = FunctionTool(legacy, name="renamed", description="Custom.")
    declaration = tool.get_declaration()
    assert (declaration.name, declaration.description) == ("renamed", "Custom.")
    assert declaration.parameters_json_schema is not None
    assert declaration.parameters_json_schema["required"] == ["a"]


def test_description_of_a_callable_object_and_of_a_partial() -> None:
    """google-adk 2.13 describes a callable object by its ``__call__``'s docstring when its
    class has none, and a ``functools.partial`` by its function's; before, the object's
    description was empty and the partial's was ``functools.partial``'s own docstring."""

    class Lookup:
        async def __call__(self, city: str, tool_context: ToolContext) -> str:
            """Look up a city.

            Args:
                city: the city's name.
            """
            return city

    class Documented:
        """The class's own words win."""

        def __call__(self, x: int) -> int:
            """Not these."""
            return x

    def scale(value: int, factor: int) -> int:
        """Scale a value."""
        return value * factor

    lookup = FunctionTool(Lookup())
    assert lookup.description == "Look up a city."
    declaration = lookup.get_declaration()
    assert declaration is not None
    assert declaration.parameters_json_schema is not None
    assert declaration.parameters_json_schema["properties"]["city"]["description"] == (
        "the city's name."
    )
    assert FunctionTool(Documented()).description == "The class's own words win."
    assert FunctionTool(functools.partial(scale, factor=2), name="scale").description == (
        "Scale a value."
    )


async def test_missing_mandatory_arguments_are_answered_as_google_adk_does() -> None:
    """google-adk 2.13 answers a call that lacks mandatory parameters with an error naming
    them (its words), from ``run_async`` itself and without calling the function; before,
    Eventide's ``run_async`` raised ToolArgumentsError with its own text."""
    calls: list[object] = []

    def book(city: str, nights: int, breakfast: bool = False) -> str:
        """Book a room."""
        calls.append(city)
        return "booked"

    tool = FunctionTool(book)
    result = await tool.run_async(args={"breakfast": True}, tool_context=None)  # type: ignore[arg-type]
    assert result == {
        "error": "Invoking `book()` failed as the following mandatory input parameters are "
        "not present:\ncity\nnights\nYou could retry calling this tool, but it is IMPORTANT "
        "for you to provide all the mandatory parameters."
    }
    with pytest.raises(ToolArgumentsError, match="mandatory input parameters are not present"):
        tool.validate_args({"city": "Oslo"})
    wrong_type = await tool.run_async(args={"city": "Oslo", "nights": "many"}, tool_context=None)  # type: ignore[arg-type]
    assert wrong_type["error"].startswith("Invalid arguments for tool 'book': nights:")
    assert calls == []
    assert await tool.run_async(args={"city": "Oslo", "nights": 2}, tool_context=None) == "booked"  # type: ignore[arg-type]
