"""The offline demo model, and the rule that decides when an app runs on it.

With no model configured (no provider key, no ``EVENTIDE_MODEL``), apps still run: each
``LlmAgent`` that cannot reach its model gets a demo model for the run. The demo model is
a :class:`~eventide.testing.FunctionModel` that reads the request like a (very literal)
model would: it picks the declared tool whose name and description share the most words
with the user's message, fills the arguments from the message (numbers, quoted strings,
words matching enum values, capitalized words, defaults), calls the tool, and then answers
in text showing the tool's result. An agent with sub-agents hands the conversation to the
sub-agent whose name or description matches best. Everything else gets a short answer
saying what the demo model can do. The app's tools, callbacks, state and sessions are all
real; only the model's "thinking" is canned.

The swap rule (:func:`prepare_models`), for each ``LlmAgent`` of the tree:

- a ``BaseLlm`` object is kept;
- a model name whose provider key is missing (``gemini-*`` without ``GOOGLE_API_KEY`` /
  ``GEMINI_API_KEY``, ``gpt-*``/``o1``.../``openai/*`` without ``OPENAI_API_KEY`` or
  ``OPENAI_BASE_URL``, ``claude-*`` without ``ANTHROPIC_API_KEY``) is replaced by the demo
  model; any other name is kept;
- an agent with no model inherits its ancestor's; a top agent with none gets
  ``EVENTIDE_MODEL``, else a default for the first provider key set (Gemini, OpenAI,
  Anthropic), else the demo model.

The replacement is undone by :meth:`ModelSetup.restore`, so the user's agent objects are
left as they were found.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from eventide import types
from eventide._json import JsonObject, JsonValue
from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import LlmAgent
from eventide.errors import ConfigurationError
from eventide.models.base_llm import BaseLlm
from eventide.models.llm_request import LlmRequest
from eventide.models.llm_response import LlmResponse
from eventide.protocol import SET_MODEL_RESPONSE, TRANSFER_TO_AGENT
from eventide.testing import FunctionModel

__all__ = [
    "DEMO_MODEL_NAME",
    "HOW_TO_CONFIGURE",
    "ModelSetup",
    "demo_model_for",
    "prepare_models",
]

DEMO_MODEL_NAME = "eventide-demo"
HOW_TO_CONFIGURE = (
    "set GOOGLE_API_KEY, OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) or "
    "ANTHROPIC_API_KEY to use a real model (then EVENTIDE_MODEL picks which one)"
)

# (name pattern, env vars of which one must be set, the provider's name for messages)
_PROVIDERS: tuple[tuple[re.Pattern[str], tuple[str, ...], str], ...] = (
    (
        re.compile(r"(models/)?gemini-.*|gemini/.*|google/.*"),
        ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"),
        "Gemini",
    ),
    (
        re.compile(r"(gpt-|chatgpt-|o\d|openai/).*"),
        ("OPENAI_API_KEY", "OPENAI_BASE_URL"),
        "OpenAI",
    ),
    (re.compile(r"(claude-|anthropic/).*"), ("ANTHROPIC_API_KEY",), "Anthropic"),
)
# The model a top agent without one gets, by the first provider key found.
_DEFAULTS = (
    (("GOOGLE_API_KEY", "GEMINI_API_KEY"), "gemini-2.5-flash"),
    (("OPENAI_API_KEY",), "gpt-4o-mini"),
    (("ANTHROPIC_API_KEY",), "claude-sonnet-4-5"),
)


@dataclass(slots=True, kw_only=True)
class ModelSetup:
    """What :func:`prepare_models` decided for an agent tree.

    Attributes:
        uses_demo_model: at least one agent runs on the demo model.
        models: agent name -> the model it runs on (a name, or ``eventide-demo``).
        reasons: why the demo model is used, one line per agent that got it.
    """

    uses_demo_model: bool
    models: dict[str, str]
    reasons: list[str] = field(default_factory=list)
    _originals: list[tuple[LlmAgent, str | BaseLlm]] = field(default_factory=list, repr=False)
    # Names in ``models`` that belong to BaseLlm objects (not resolved through the registry).
    _objects: set[str] = field(default_factory=set, repr=False)

    def notice(self) -> str:
        """The one line to show people before the app runs."""
        real = sorted({m for m in self.models.values() if m != DEMO_MODEL_NAME})
        if self.uses_demo_model and not real:
            return f"Using the offline demo model (no real model configured): {HOW_TO_CONFIGURE}."
        if self.uses_demo_model:
            demo = [name for name, model in self.models.items() if model == DEMO_MODEL_NAME]
            return (
                f"Using the offline demo model for {', '.join(demo)} ({'; '.join(self.reasons)}); "
                f"the other agents use {', '.join(real)}."
            )
        return f"Model: {', '.join(real)}"

    def check_model_names(self) -> None:
        """Resolve every model name kept, so a name no connector serves fails now, before
        the first turn, rather than in the middle of a conversation.

        Raises:
            ConfigurationError: a name no connector serves, or a connector's missing extra.
        """
        from eventide.models.registry import LLMRegistry

        for model in sorted(set(self.models.values()) - {DEMO_MODEL_NAME} - self._objects):
            LLMRegistry.resolve(model)

    @classmethod
    def prepare(cls, root: BaseAgent, env: Mapping[str, str]) -> ModelSetup:
        """Decide (and set) each ``LlmAgent``'s model; see :func:`prepare_models`."""
        setup = cls(uses_demo_model=False, models={})
        setup._assign(root, inherited=None, env=env)
        return setup

    def _assign(
        self, agent: BaseAgent, *, inherited: str | BaseLlm | None, env: Mapping[str, str]
    ) -> None:
        effective = inherited
        if isinstance(agent, LlmAgent):
            own = agent.model
            if isinstance(own, BaseLlm):
                effective = own
            elif own:
                effective = own
            elif inherited is None:
                asked = _configured(env, "EVENTIDE_MODEL")
                if asked and not _has_key(asked, env):
                    # Asked for by name: running the demo model instead would hide that the
                    # key is missing behind answers that look like a model's.
                    raise ConfigurationError(
                        f"EVENTIDE_MODEL={asked} needs a key and none is set: set "
                        f"{_key_names(asked)}, or unset EVENTIDE_MODEL to use the offline demo "
                        "model."
                    )
                chosen = asked or _default_model(env)
                if chosen:
                    self._originals.append((agent, own))
                    agent.model = chosen
                effective = chosen or None
            if isinstance(effective, str) and not _has_key(effective, env):
                self._originals.append((agent, agent.model))
                self.reasons.append(f"{agent.name}: {_why(effective)}")
                agent.model = demo_model_for(agent)
                self.uses_demo_model = True
                self.models[agent.name] = DEMO_MODEL_NAME
            elif effective is None:
                self._originals.append((agent, agent.model))
                self.reasons.append(f"{agent.name}: no model is set and no provider key is found")
                agent.model = demo_model_for(agent)
                self.uses_demo_model = True
                self.models[agent.name] = DEMO_MODEL_NAME
            elif isinstance(effective, str):
                self.models[agent.name] = effective
            else:
                self.models[agent.name] = effective.model
                self._objects.add(effective.model)
        for sub in agent.sub_agents:
            self._assign(sub, inherited=effective, env=env)

    def restore(self) -> None:
        """Put back the models the agents had before :func:`prepare_models`."""
        for agent, original in reversed(self._originals):
            agent.model = original
        self._originals.clear()


def prepare_models(root: BaseAgent, env: Mapping[str, str] | None = None) -> ModelSetup:
    """Give each ``LlmAgent`` of the tree a model it can run on (see the module docstring).

    Args:
        root: the root agent; its ``LlmAgent``s' ``model`` is changed until
            :meth:`ModelSetup.restore` is called.
        env: the environment to read keys from (``os.environ`` by default).
    """
    return ModelSetup.prepare(root, os.environ if env is None else env)


def _configured(env: Mapping[str, str], name: str) -> str:
    return env.get(name, "").strip()


def _default_model(env: Mapping[str, str]) -> str:
    for keys, model in _DEFAULTS:
        if any(_configured(env, key) for key in keys):
            return model
    return ""


def _has_key(model: str, env: Mapping[str, str]) -> bool:
    for pattern, keys, _provider in _PROVIDERS:
        if pattern.fullmatch(model):
            return any(_configured(env, key) for key in keys)
    # Local (ollama/...), catch-all (litellm/...) and user-registered names carry their own
    # configuration; an unknown name fails with the registry's message when resolved.
    return True


def _key_names(model: str) -> str:
    for pattern, keys, _provider in _PROVIDERS:
        if pattern.fullmatch(model):
            return " or ".join(keys[:2])
    return "the provider's key"  # pragma: no cover - only asked for names _has_key refused


def _why(model: str) -> str:
    for pattern, keys, provider in _PROVIDERS:
        if pattern.fullmatch(model):
            return f"model {model!r} needs a {provider} key ({' or '.join(keys[:2])})"
    return f"model {model!r} is not configured"  # pragma: no cover - _has_key said True


# --- the demo model itself ---
_STOP_WORDS = frozenset(
    """a an the is are was be to of in on at for from with by and or but not no me my i you
    your it its this that these those what which who how when where why can could would
    should will do does did please tell give show get let make find about some any all as
    into than then there their them they we our us he she his her hi hello hey thanks
    thank much many just also one""".split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*|\d+(?:\.\d+)?")
_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'|“([^”]+)”")
# A minus sign counts only when it does not join a word ("INV-1001" holds 1001, not -1001).
_NUMBER = re.compile(r"(?:(?<![\w.])-)?\d+(?:\.\d+)?")
_CAPITALIZED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-zA-Z]+(?:\s+[A-Z][a-zA-Z]+)*)")
# String parameters that take a whole sentence: the user's message fills them as it is.
_FREE_TEXT = frozenset(
    "summary description text message query question content body note title reason "
    "prompt request details comment".split()
)
_PREPOSITIONS = frozenset("in at for to from about of on called named".split())
_CHUNK = 12


def demo_model_for(agent: LlmAgent) -> FunctionModel:
    """A demo model bound to ``agent`` (it knows the agent's sub-agents for transfers)."""
    # What each sub-agent is for: its description and its tools' names and summaries, so
    # "open a ticket" finds the agent that has an open_ticket tool.
    targets = {sub.name: _purpose(sub) for sub in agent.sub_agents}

    def respond(llm_request: LlmRequest) -> LlmResponse:
        # FunctionModel keeps every request for tests to inspect; a demo serving a long
        # chat (or a dev server) must not, or memory grows with each turn's history.
        model.requests.clear()
        return _respond(llm_request, agent_name=agent.name, sub_agents=targets)

    model = FunctionModel(model=DEMO_MODEL_NAME, function=respond, stream_chunk_size=_CHUNK)
    return model


def _purpose(agent: BaseAgent) -> str:
    words = [agent.description]
    for tool in getattr(agent, "tools", None) or ():
        name = getattr(tool, "name", None) or getattr(tool, "__name__", "")
        doc = getattr(tool, "description", None) or (getattr(tool, "__doc__", None) or "")
        words += [str(name), str(doc)]
    return " ".join(words)


def _respond(request: LlmRequest, *, agent_name: str, sub_agents: Mapping[str, str]) -> LlmResponse:
    message, after = _current_turn(request.contents)
    results = _latest_results(after)
    declarations = {
        d.name: d for tool in request.config.tools or () for d in tool.function_declarations or ()
    }
    # An agent with an output_schema answers through set_model_response (with tools) or with
    # JSON text (without): the answer is built from the schema like a tool's arguments.
    final_tool = declarations.pop(SET_MODEL_RESPONSE, None)
    schema = request.config.response_json_schema
    if results:
        summary = _describe_results(results)
        if final_tool is not None:
            return _call(final_tool.name, _fill_arguments(final_tool, message, summary))
        if schema is not None:
            return _json_answer(schema, message, summary)
        return _text(summary)
    words = _words(message)
    transfer = declarations.get(TRANSFER_TO_AGENT)
    if transfer is not None and sub_agents and not _transferred(after):
        allowed = set(_enum_of(transfer, "agent_name"))
        scored = [
            (_overlap(words, _words(f"{name} {description}")), name)
            for name, description in sub_agents.items()
            if name in allowed
        ]
        best = max(scored, default=(0, ""))
        tool_best = max(
            (_tool_score(words, d) for n, d in declarations.items() if n != transfer.name),
            default=0,
        )
        if best[0] > 0 and best[0] >= tool_best:
            return _call(TRANSFER_TO_AGENT, {"agent_name": best[1]})
    candidates = [
        (_tool_score(words, d), name)
        for name, d in declarations.items()
        if name != TRANSFER_TO_AGENT
    ]
    score, name = max(candidates, default=(0, ""))
    if score > 0:
        return _call(name, _fill_arguments(declarations[name], message))
    if final_tool is not None:
        return _call(final_tool.name, _fill_arguments(final_tool, message))
    if schema is not None:
        return _json_answer(schema, message)
    return _text(_fallback(message, agent_name, [n for _, n in candidates], list(sub_agents)))


def _json_answer(schema: dict[str, Any], message: str, summary: str = "") -> LlmResponse:
    shape = types.FunctionDeclaration(name="answer", parameters_json_schema=schema)
    return _text(json.dumps(_fill_arguments(shape, message, summary), ensure_ascii=False))


def _current_turn(
    contents: list[types.Content],
) -> tuple[str, list[types.Content]]:
    """The latest message the end user typed, and the contents that came after it."""
    for index in range(len(contents) - 1, -1, -1):
        content = contents[index]
        if content.role != "user" or not content.parts:
            continue
        texts = [p.text for p in content.parts if p.text]
        if texts and texts[0] != "For context:":
            return " ".join(texts), contents[index + 1 :]
    return "", contents


def _latest_results(after: list[types.Content]) -> list[types.FunctionResponse]:
    if not after:
        return []
    last = after[-1]
    return [
        p.function_response
        for p in last.parts or ()
        if p.function_response is not None and p.function_response.name != TRANSFER_TO_AGENT
    ]


def _transferred(after: list[types.Content]) -> bool:
    for content in after:
        for part in content.parts or ():
            if part.function_call is not None and part.function_call.name == TRANSFER_TO_AGENT:
                return True
            if part.text and "`transfer_to_agent`" in part.text:
                return True
    return False


def _words(text: str) -> set[str]:
    found: set[str] = set()
    for raw in _WORD.findall(_split_camel(text)):
        word = raw.lower()
        if word in _STOP_WORDS or len(word) < 2:
            continue
        found.add(word[:-1] if len(word) > 3 and word.endswith("s") else word)
    return found


def _split_camel(text: str) -> str:
    return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text).replace("_", " ")


def _overlap(message: set[str], other: set[str]) -> int:
    return len(message & other)


def _tool_score(words: set[str], declaration: types.FunctionDeclaration) -> int:
    # Words of the tool's name count double: "weather" in get_weather says more than a
    # word somewhere in a long description. Parameter descriptions count too ("one of
    # 'api', 'email'" makes "the api is down" a question for that tool).
    described = " ".join(
        f"{prop.get('description', '')} {' '.join(map(str, _enum(prop)))}"
        for prop in _properties(declaration).values()
    )
    return (
        2 * _overlap(words, _words(declaration.name))
        + _overlap(words, _words(declaration.description or ""))
        + _overlap(words, _words(described))
    )


def _properties(declaration: types.FunctionDeclaration) -> dict[str, JsonObject]:
    """The JSON schemas of the declaration's parameters, by name."""
    properties = (declaration.parameters_json_schema or {}).get("properties")
    if not isinstance(properties, dict):
        return {}
    return {
        str(name): cast("JsonObject", prop)
        for name, prop in cast("dict[object, object]", properties).items()
        if isinstance(prop, dict)
    }


def _required(declaration: types.FunctionDeclaration) -> set[str]:
    required = (declaration.parameters_json_schema or {}).get("required")
    if not isinstance(required, list):
        return set()
    return {str(name) for name in cast("list[object]", required)}


def _enum(prop: JsonObject) -> list[JsonValue]:
    enum = prop.get("enum")
    return enum if isinstance(enum, list) else []


def _enum_of(declaration: types.FunctionDeclaration, parameter: str) -> list[str]:
    prop = _properties(declaration).get(parameter)
    return [str(v) for v in _enum(prop)] if prop is not None else []


def _fill_arguments(
    declaration: types.FunctionDeclaration, message: str, summary: str = ""
) -> dict[str, Any]:
    """Arguments for ``declaration`` taken from the user's ``message``; a required string
    found nowhere in it gets ``summary`` (the tool results, for a final answer)."""
    properties = _properties(declaration)
    required = _required(declaration)
    numbers = _NUMBER.findall(message)
    quoted = [next(g for g in groups if g) for groups in _QUOTED.findall(message)]
    capitalized = _CAPITALIZED.findall(_QUOTED.sub(" ", message))
    skip = _words(declaration.name) | _words(declaration.description or "")
    for name, prop in properties.items():
        skip |= _words(name) | {str(v).lower() for v in _enum(prop)}
    # Words after a preposition name things ("weather in paris"); otherwise the last word.
    tokens = _WORD.findall(message)
    plain = [
        w
        for i, w in enumerate(tokens)
        if i > 0 and tokens[i - 1].lower() in _PREPOSITIONS and w.lower() not in skip
    ] or [w for w in tokens if _words(w) and not (_words(w) & skip) and not w[0].isdigit()][::-1]
    args: dict[str, Any] = {}
    for name, prop in properties.items():
        kind = _kind(prop)
        enum = _enum(prop)
        value: JsonValue = None
        # Choices a docstring lists in quotes (`one of "api", "email"`) work as a soft enum.
        choices = [
            next(g for g in groups if g)
            for groups in _QUOTED.findall(str(prop.get("description") or ""))
        ]
        mentioned = [c for c in choices if re.search(rf"\b{re.escape(c)}\b", message, re.I)]
        if not enum and mentioned and kind == "string":
            value = mentioned[0]
        elif enum:
            lowered = message.lower()
            value = next((v for v in enum if str(v).lower() in lowered), None)
            if value is None and name in required:
                value = prop.get("default", enum[0])
        elif kind in ("integer", "number") and numbers:
            raw = numbers.pop(0)
            value = int(float(raw)) if kind == "integer" else float(raw)
        elif kind == "string":
            if name in _FREE_TEXT and name in required:
                value = message.strip()
            elif quoted:
                value = quoted.pop(0)
            elif capitalized and (name in required or "default" not in prop):
                value = capitalized.pop(0)
            elif plain and name in required:
                value = plain.pop(0)
        elif kind == "boolean" and name in required:
            value = bool(re.search(r"\b(yes|true|on|enable|enabled)\b", message, re.I))
        if value is None and "default" in prop:
            value = prop["default"]
        if value is None and name in required:
            value = summary if kind == "string" and summary else _empty(kind)
        if value is not None:
            args[name] = value
    return args


def _kind(prop: JsonObject) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind is None:
        options = prop.get("anyOf")
        for option in options if isinstance(options, list) else []:
            if isinstance(option, dict) and option.get("type") not in (None, "null"):
                return str(option["type"])
        return "string"
    return str(kind)


def _empty(kind: str) -> JsonValue:
    empty: dict[str, JsonValue] = {
        "integer": 0,
        "number": 0.0,
        "boolean": False,
        "array": [],
        "object": {},
    }
    return empty.get(kind, "")


def _describe_results(results: list[types.FunctionResponse]) -> str:
    lines: list[str] = []
    for result in results:
        payload: Any = result.response or {}
        if isinstance(payload, dict) and set(cast("dict[str, Any]", payload)) == {"result"}:
            payload = cast("dict[str, Any]", payload)["result"]
        shown = (
            payload
            if isinstance(payload, str)
            else json.dumps(payload, default=str, ensure_ascii=False)
        )
        lines.append(f"{result.name} returned: {shown}")
    return "\n".join(lines)


def _fallback(message: str, agent_name: str, tools: list[str], agents: list[str]) -> str:
    quoted = f'"{message}"' if message else "your message"
    offers: list[str] = []
    if tools:
        offers.append(f"tools ({', '.join(tools)})")
    if agents:
        offers.append(f"agents ({', '.join(agents)})")
    if offers:
        return (
            f"[demo model] I am {agent_name}, running offline. I could not match {quoted} to "
            f"my {' or '.join(offers)}; mention one of them or words from its description."
        )
    return f"[demo model] I am {agent_name}, running offline, and I received {quoted}."


def _text(text: str) -> LlmResponse:
    return LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        usage_metadata=types.UsageMetadata(prompt_token_count=0, candidates_token_count=0),
    )


def _call(name: str, args: dict[str, Any]) -> LlmResponse:
    return LlmResponse(
        content=types.Content(
            role="model",
            parts=[types.Part(function_call=types.FunctionCall(name=name, args=args))],
        )
    )
