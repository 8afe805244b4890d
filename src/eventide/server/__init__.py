"""The HTTP API server: serves agent apps over HTTP (FastAPI + uvicorn).

Importing this package imports FastAPI; ``import eventide`` never does. Typical use::

    from eventide.server import create_app, serve

    api = create_app(apps_dir="agents", web=True)
    serve(api, host="127.0.0.1", port=8000)

The endpoints (those of ``adk api_server`` and ``adk web``'s developer routes, with the same
methods, status codes and camelCase JSON; the OpenAPI spec is at ``/openapi.json``):

=======================================================================  =======================
``GET /health``                                                          liveness, never needs auth
``GET /list-apps``, ``GET /version``, ``GET /apps/{app}/app-info``          apps, version, agents
``POST /apps/{app}/users/{user}/sessions[/{session_id}]``                create (state, events)
``GET /apps/{app}/users/{user}/sessions[/{session_id}]``                 list, or one with events
``PATCH /apps/{app}/users/{user}/sessions/{session_id}``                 ``{"stateDelta": ...}``
``DELETE /apps/{app}/users/{user}/sessions/{session_id}``                delete
``POST /run``                                                            one turn -> its events
``POST /run_sse``                                                        one turn as SSE
``WEBSOCKET /run_live``                                                  turns on a websocket
``GET|POST|DELETE .../sessions/{id}/artifacts[/{name}[/versions[/{v}]]]``  artifacts
``GET .../artifacts/{name}/versions[/{v}]/metadata``                     version metadata
``PATCH /apps/{app}/users/{user}/memory``                                add a session to memory
``GET /debug/model_request/{event_id}``                                  what the model was asked
=======================================================================  =======================

A turn's body is ``{"app_name", "user_id", "session_id", "new_message": <Content JSON>,
"streaming": false, "state_delta": {}}`` (ADK's camelCase keys accepted); events are answered
in ADK's camelCase. A client that hangs up during ``/run_sse`` cancels its turn (committed events
stay); on SIGTERM, running turns finish within the graceful-shutdown timeout of :func:`serve`
and are cancelled cleanly past it.
"""

from eventide.server.api_server import create_app
from eventide.server.serve import serve

__all__ = ["create_app", "serve"]
