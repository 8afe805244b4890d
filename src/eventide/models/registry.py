"""``LLMRegistry``: resolve a model name string to a connector.

Connectors register the name patterns they serve. Built-in connectors are registered by
import path, so their provider SDK is imported only when a matching name is resolved.
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache

from eventide.errors import ConfigurationError
from eventide.models.base_llm import BaseLlm

__all__ = ["LLMRegistry"]

# (pattern, "module:Class") of the connectors that ship with Eventide; checked after the
# ones users register. Issue-specific connectors add themselves here.
_BUILTIN: list[tuple[str, str]] = [
    (r"gemini-.*", "eventide.models.gemini_llm:GeminiLlm"),
    (r"models/gemini-.*", "eventide.models.gemini_llm:GeminiLlm"),
    (r"gpt-.*", "eventide.models.openai_llm:OpenAILlm"),
    (r"o[1-9].*", "eventide.models.openai_llm:OpenAILlm"),
    (r"chatgpt-.*", "eventide.models.openai_llm:OpenAILlm"),
    (r"openai/.*", "eventide.models.openai_llm:OpenAILlm"),
    (r"ollama/.*", "eventide.models.openai_llm:OpenAILlm"),
    (r"claude-.*", "eventide.models.anthropic_llm:AnthropicLlm"),
    (r"anthropic/.*", "eventide.models.anthropic_llm:AnthropicLlm"),
    (r"litellm/.*", "eventide.models.litellm_llm:LiteLlm"),
]


# Connectors registered by users, checked first (newest first for register()).
_REGISTERED: list[tuple[re.Pattern[str], type[BaseLlm] | str]] = []


class LLMRegistry:
    """Maps model name patterns to connector classes."""

    @classmethod
    def register(cls, llm_class: type[BaseLlm]) -> None:
        """Register a connector for each pattern in its ``supported_models()``."""
        for pattern in llm_class.supported_models():
            _REGISTERED.insert(0, (re.compile(pattern), llm_class))
        _resolve_class.cache_clear()

    @classmethod
    def register_lazy(cls, pattern: str, import_path: str) -> None:
        """Register a connector by ``"module:Class"`` path, imported on first use."""
        _REGISTERED.append((re.compile(pattern), import_path))
        _resolve_class.cache_clear()

    @classmethod
    def resolve(cls, model: str) -> type[BaseLlm]:
        """The connector class for ``model``.

        Raises:
            ConfigurationError: no connector serves the name, or its extra is not installed.
        """
        return _resolve_class(model)

    @classmethod
    def new_llm(cls, model: str) -> BaseLlm:
        """A connector instance for ``model``."""
        return cls.resolve(model)(model=model)


@lru_cache(maxsize=256)
def _resolve_class(model: str) -> type[BaseLlm]:
    for pattern, target in [*_REGISTERED, *_compiled_builtins()]:
        if pattern.fullmatch(model):
            if isinstance(target, str):
                module_name, _, class_name = target.partition(":")
                try:
                    module = importlib.import_module(module_name)
                except ImportError as exc:
                    raise ConfigurationError(
                        f"Model {model!r} needs an optional dependency that is not installed "
                        f"({exc.name}). Install the matching extra, e.g. "
                        "`pip install 'eventide[gemini]'` / `[openai]` / `[anthropic]` / "
                        "`[litellm]`."
                    ) from exc
                resolved: type[BaseLlm] = getattr(module, class_name)
                return resolved
            return target
    raise ConfigurationError(
        f"No model connector serves {model!r}. Use a known name (gemini-*, gpt-*, o1/o3/o4-*, "
        "claude-*, openai/<model>, ollama/<model>, litellm/<provider>/<model>), pass a BaseLlm "
        "instance as the agent's model, or register a connector with LLMRegistry.register()."
    )


def _compiled_builtins() -> list[tuple[re.Pattern[str], str]]:
    return [(re.compile(p), path) for p, path in _BUILTIN]
