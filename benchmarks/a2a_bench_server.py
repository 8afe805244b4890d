"""One side of the A2A benchmark: an agent on the fake model, served over A2A.

Usage: python -m benchmarks.a2a_bench_server eventide|adk PORT

- ``eventide``: ``eventide.a2a.to_a2a(agent)`` served by ``eventide.server.serve`` (uvicorn,
  as ``eventide api-server`` serves);
- ``adk``: google-adk 2.13's ``to_a2a(agent)`` served by uvicorn, as its docstring says.

Both agents are an ``LlmAgent`` on ``bench-text`` (benchmarks/fake_model.py), with in-memory
services.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace

from benchmarks.fake_model import make_fake_llm_class


def main() -> None:
    framework, port = sys.argv[1], int(sys.argv[2])
    if framework == "adk":
        import uvicorn
        from google.adk.a2a.utils.agent_to_a2a import to_a2a as adk_to_a2a
        from google.adk.agents import LlmAgent as AdkLlmAgent
        from google.adk.models import BaseLlm as AdkBaseLlm
        from google.adk.models import LlmResponse as AdkLlmResponse
        from google.genai import types as genai_types

        api = SimpleNamespace(types=genai_types, BaseLlm=AdkBaseLlm, LlmResponse=AdkLlmResponse)
        agent = AdkLlmAgent(
            name="bench_agent",
            model=make_fake_llm_class(api)(model="bench-text"),
            instruction="Answer briefly.",
        )
        app = adk_to_a2a(agent, host="127.0.0.1", port=port)
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
        return
    from eventide import BaseLlm, LlmAgent, LlmResponse, types
    from eventide.a2a import to_a2a
    from eventide.server import serve

    api = SimpleNamespace(types=types, BaseLlm=BaseLlm, LlmResponse=LlmResponse)
    agent = LlmAgent(
        name="bench_agent",
        model=make_fake_llm_class(api)(model="bench-text"),
        instruction="Answer briefly.",
    )
    serve(to_a2a(agent), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
