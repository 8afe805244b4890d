"""The HTTP API server: serves agent apps over HTTP (FastAPI + uvicorn).

Importing this package imports FastAPI; ``import eventide`` never does. Typical use::

    from eventide.server import create_app, serve

    api = create_app(apps_dir="agents", web=True)
    serve(api, host="127.0.0.1", port=8000)
"""

from eventide.server.api_server import create_app
from eventide.server.serve import serve

__all__ = ["create_app", "serve"]
