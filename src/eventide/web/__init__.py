"""The dev web UI: static files (HTML, CSS, JavaScript modules) served by the API server.

``create_app(web=True)`` serves ``static/`` under ``/dev-ui/``. There is no build step and
nothing is fetched from the network: the page works offline.
"""

from pathlib import Path

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The folder of the UI's files."""

__all__ = ["STATIC_DIR"]
