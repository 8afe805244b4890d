"""The HTTP API server: serves agent apps over HTTP (FastAPI + uvicorn).

Importing this package imports FastAPI; ``import eventide`` never does. Typical use::

    from eventide.server import create_app, serve

    api = create_app(apps_dir="agents", web=True)
    serve(api, host="127.0.0.1", port=8000)

The endpoints (the shapes ADK front ends use; the OpenAPI spec is at ``/openapi.json``):

====================================================================  ==========================
``GET /health``                                                       liveness, never needs auth
``GET /list-apps``                                                    the apps' names
``POST /apps/{app}/users/{user}/sessions[/{session_id}]``             create (body: initial state)
``GET /apps/{app}/users/{user}/sessions[/{session_id}]``              list, or one with its events
``DELETE /apps/{app}/users/{user}/sessions/{session_id}``             delete
``POST /run``                                                         one turn -> its events (JSON)
``POST /run_sse``                                                     one turn as server-sent events
``GET .../sessions/{session_id}/artifacts[/{name}[/versions[/{v}]]]``  artifacts (``?version=``)
``GET /debug/model_request/{event_id}``                               what the model was asked
====================================================================  ==========================

A turn's body is ``{"app_name", "user_id", "session_id", "new_message": <Content JSON>,
"streaming": false, "state_delta": {}}``; ADK's camelCase keys are accepted and then answered
in camelCase. A client that hangs up during ``/run_sse`` cancels its turn (committed events
stay); on SIGTERM, running turns finish within the graceful-shutdown timeout of :func:`serve`
and are cancelled cleanly past it.
"""

from eventide.server.api_server import create_app
from eventide.server.serve import serve

__all__ = ["create_app", "serve"]
