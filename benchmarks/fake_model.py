"""The scripted fake model, built on each framework's own ``BaseLlm``.

The same canned responses on both sides, chosen by the model name and the request so one
instance serves any number of concurrent sessions (no shared cursor):

- ``bench-text``: one text answer.
- ``bench-tool``: a call of ``get_weather(city="Paris")``; once the request's last content
  carries a function response, a text answer.
- ``bench-stream-N``: with ``stream=True``, N partial text chunks then the final response
  aggregating them; without streaming, the final response only.

Responses are built fresh on every call (as a real connector does), never shared between
calls: a runtime may legitimately set fields on them (e.g. a function call id).
"""

from __future__ import annotations

from typing import Any

__all__ = ["ANSWER", "CHUNK", "get_weather", "get_weather_async", "make_fake_llm_class"]

ANSWER = "It is sunny in Paris today."
CHUNK = "tok "


def make_fake_llm_class(api: Any) -> Any:
    """A ``BaseLlm`` subclass of ``api``'s framework that plays the scripts above."""
    types = api.types
    llm_response = api.LlmResponse

    def text_response(text: str, partial: bool | None = None) -> Any:
        content = types.Content(role="model", parts=[types.Part(text=text)])
        if partial:
            return llm_response(content=content, partial=True)
        return llm_response(content=content)

    def call_response() -> Any:
        call = types.FunctionCall(name="get_weather", args={"city": "Paris"})
        return llm_response(
            content=types.Content(role="model", parts=[types.Part(function_call=call)])
        )

    def answered_tool(llm_request: Any) -> bool:
        contents = llm_request.contents
        if not contents:
            return False
        parts = contents[-1].parts or ()
        return any(part.function_response is not None for part in parts)

    class BenchLlm(api.BaseLlm):  # type: ignore[misc, name-defined]
        """Plays the benchmark's canned responses (see the module docstring)."""

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            name = self.model
            if name == "bench-text":
                yield text_response(ANSWER)
            elif name == "bench-tool":
                yield text_response(ANSWER) if answered_tool(llm_request) else call_response()
            elif name.startswith("bench-stream-"):
                chunks = int(name.rsplit("-", 1)[1])
                if stream:
                    for _ in range(chunks):
                        yield text_response(CHUNK, partial=True)
                yield text_response(CHUNK * chunks)
            else:
                raise ValueError(f"unknown benchmark model {name!r}")

    return BenchLlm


async def get_weather_async(city: str) -> dict[str, str]:
    """Return the weather forecast for a city.

    Args:
        city: the city's name.
    """
    return {"city": city, "forecast": "sunny"}


def get_weather(city: str) -> dict[str, str]:
    """Return the weather forecast for a city.

    Args:
        city: the city's name.
    """
    return {"city": city, "forecast": "sunny"}


# Both tools must be declared as ``get_weather``: that is the name the script calls.
get_weather_async.__name__ = get_weather_async.__qualname__ = "get_weather"
