"""``ModelRequestRecorder``: remembers the request sent to the model for each model event.

The dev UI shows, for a selected event, what the model was asked. The recorder is a plain
plugin built on the public hooks: ``before_model_callback`` sees the ``LlmRequest`` about to
be sent and parks it under (invocation, branch, agent); ``on_event_callback`` then links the
model-response events that agent yields to that request. Only references are kept (a request
is serialized when someone asks for it), in a store bounded by ``max_requests``, so the cost
on the hot path is a couple of dict operations per model call and per event.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from eventide.plugins.base_plugin import BasePlugin
from eventide.types import camel_case_keys

if TYPE_CHECKING:
    from eventide.contexts import CallbackContext, InvocationContext
    from eventide.events import Event
    from eventide.models.llm_request import LlmRequest
    from eventide.models.llm_response import LlmResponse

__all__ = ["ModelRequestRecorder"]

_Key = tuple[str | None, str]


class ModelRequestRecorder(BasePlugin):
    """Links model-response events to the ``LlmRequest`` that produced them.

    Args:
        max_requests: how many event -> request links to keep; the oldest go first.
        name: the plugin's name (unique among a Runner's plugins).
    """

    observes_only = True  # it keeps the requests it is shown, and changes nothing

    def __init__(
        self, *, max_requests: int = 1000, name: str = "eventide_model_request_recorder"
    ) -> None:
        super().__init__(name)
        if max_requests < 1:
            raise ValueError(f"max_requests must be at least 1, got {max_requests}")
        self.max_requests = max_requests
        # Requests sent but whose response events have not all arrived yet, per invocation
        # (so that ending an invocation does not scan those of every other turn running
        # concurrently), then per (branch, agent). Bounded too: an invocation cancelled
        # mid-call never delivers its response event.
        self._pending: OrderedDict[str, dict[_Key, LlmRequest]] = OrderedDict()
        self._by_event: OrderedDict[str, LlmRequest] = OrderedDict()

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        ictx = callback_context.invocation_context
        pending = self._pending
        calls = pending.get(ictx.invocation_id)
        if calls is None:
            calls = pending[ictx.invocation_id] = {}
            while len(pending) > self.max_requests:
                pending.popitem(last=False)
        calls[(ictx.branch, ictx.agent.name)] = llm_request
        return None

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        calls = self._pending.get(event.invocation_id or invocation_context.invocation_id)
        if calls is None:
            return None
        key = (event.branch, event.author)
        request = calls.get(key)
        if request is None or not _is_model_output(event):
            return None
        store = self._by_event
        store[event.id] = request
        while len(store) > self.max_requests:
            store.popitem(last=False)
        if not event.partial:
            # The complete response closes this model call; later events of the agent (tool
            # results, callbacks) were not produced by it.
            del calls[key]
        return None

    async def after_run_callback(self, *, invocation_context: InvocationContext) -> None:
        self._pending.pop(invocation_context.invocation_id, None)

    def request_for_event(self, event_id: str) -> LlmRequest | None:
        """The request whose response is the event ``event_id``, if still remembered."""
        return self._by_event.get(event_id)

    def request_json(self, event_id: str) -> dict[str, Any] | None:
        """:meth:`request_for_event` as camelCase JSON data (``tools_dict`` left out), or
        None."""
        request = self._by_event.get(event_id)
        if request is None:
            return None
        data = camel_case_keys(request.model_dump(mode="json", exclude_none=True))
        assert isinstance(data, dict)
        return dict(data)


def _is_model_output(event: Event) -> bool:
    if event.error_code is not None:
        return True
    content = event.content
    if content is None:
        return False
    return content.role in (None, "model") and not event.get_function_responses()
