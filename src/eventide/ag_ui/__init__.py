"""AG-UI: CopilotKit and other AG-UI front ends talk to Eventide agents.

``eventide api-server APPS_DIR --ag-ui`` (``create_app(..., ag_ui=True)``) serves
``POST /ag-ui/{app_name}``; :func:`add_ag_ui_endpoint` serves one agent on a FastAPI app of
your own. Needs the ``ag-ui`` extra (the official ``ag-ui-protocol`` package).

A thread is a session; the client's tools become long-running calls its next run answers;
confirmations, credentials and other long-running calls end a run with an interrupt that the
next run's ``resume`` answers; the client's state is committed as a state change. The rules
in full: :mod:`.run_input` (requests) and :mod:`.event_stream` (events).
"""

from eventide.ag_ui.ag_ui_routes import add_ag_ui_endpoint, add_ag_ui_routes, run_ag_ui

__all__ = ["add_ag_ui_endpoint", "add_ag_ui_routes", "run_ag_ui"]
