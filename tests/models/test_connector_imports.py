"""Provider SDKs load only when a connector is used (checked in fresh interpreters)."""

from __future__ import annotations

import json
import subprocess
import sys

SDKS = ["openai", "anthropic", "google.genai", "litellm"]


def _loaded_after(code: str) -> list[str]:
    script = (
        f"import json, sys\n{code}\nprint(json.dumps([m for m in {SDKS!r} if m in sys.modules]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    loaded: list[str] = json.loads(result.stdout.strip().splitlines()[-1])
    return loaded


def test_import_eventide_loads_no_provider_sdk() -> None:
    assert _loaded_after("import eventide, eventide.models") == []


def test_resolving_names_loads_no_provider_sdk() -> None:
    """Resolving a name imports the connector module; its SDK waits for the first call."""
    code = (
        "from eventide.models.registry import LLMRegistry\n"
        "for name in ['gemini-2.5-flash', 'gpt-4.1', 'claude-sonnet-4-5', 'litellm/x/y']:\n"
        "    LLMRegistry.new_llm(name)\n"
    )
    assert _loaded_after(code) == []


def test_first_use_loads_only_that_sdk() -> None:
    code = (
        "from eventide.models.openai_llm import OpenAILlm\n"
        "OpenAILlm(model='gpt-4.1', api_key='k').get_provider().client()\n"
    )
    assert _loaded_after(code) == ["openai"]
