"""OpenAI-compatible endpoints: any OpenAI client, SDK or chat UI can talk to an app.

``eventide api-server APPS_DIR --openai`` (or ``create_app(..., openai=True)``) serves
``POST /v1/chat/completions``, ``POST /v1/responses`` and ``GET /v1/models``, where a
model is an app. The adapter keeps nothing of its own: a conversation is a session
(:mod:`.openai_sessions` says which), a request is a turn of the app's Runner.
"""

from eventide.openai_compat.openai_routes import add_openai_routes

__all__ = ["add_openai_routes"]
