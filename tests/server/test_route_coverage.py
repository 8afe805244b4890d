"""Every route of google-adk 2.13's server (``adk web``: the API server's routes and the
developer routes) exists in Eventide's, with the same method and path, or is on the
exclusion list below with the reason it is not built.

google-adk's FastAPI app is built in its own venv (``tests/adk_env.py``) the way ``adk web``
builds it (``get_fast_api_app(agents_dir=..., web=True)``), in a subprocess, and only its
route table (method and path) is read: nothing of google-adk is copied here.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from starlette.routing import Mount, Route, WebSocketRoute

from eventide import LlmAgent
from eventide.apps import App
from eventide.server import create_app
from eventide.testing import ScriptedModel
from tests.adk_env import adk_python

_LIST_ADK_ROUTES = """
import json, logging, sys, warnings
logging.disable(logging.CRITICAL)
warnings.simplefilter("ignore")
from google.adk.cli.fast_api import get_fast_api_app
from starlette.routing import Mount, Route, WebSocketRoute
app = get_fast_api_app(agents_dir=sys.argv[1], web=True)
routes = []
for route in app.routes:
    if isinstance(route, WebSocketRoute):
        routes.append(["WEBSOCKET", route.path])
    elif isinstance(route, Mount):
        routes.append(["MOUNT", route.path])
    elif isinstance(route, Route):
        routes += [[m, route.path] for m in sorted(route.methods or ()) if m != "HEAD"]
print(json.dumps(routes))
"""

_GCP = "needs Google Cloud"
# ADK routes Eventide does not serve, and why.
EXCLUDED: dict[str, str] = {
    "POST /agent-identity/finalize": f"{_GCP}: finalizes Agent Identity credentials through "
    "Google Cloud's IAM connector service; Eventide has no Google identity integration.",
    "GET /dev/apps/{}/deploy/defaults": f"{_GCP}: the UI's deploy dialog (gcloud project, "
    "region) for the three deploy routes below.",
    "POST /dev/apps/{}/deploy/agent_engine": f"{_GCP}: deploys the agent to Vertex AI Agent "
    "Engine.",
    "POST /dev/apps/{}/deploy/cloud_run": f"{_GCP}: deploys the agent to Cloud Run.",
    "POST /dev/apps/{}/deploy/gke": f"{_GCP}: deploys the agent to GKE.",
    "GET /dev/apps/{}/builder": "ADK's visual agent builder reads and writes YAML agent "
    "configs in the app folder; Eventide apps are Python code (ADK's UI still works without "
    "it: it only hides the builder).",
    "POST /dev/apps/{}/builder/save": "the agent builder (see GET .../builder).",
    "POST /dev/apps/{}/builder/cancel": "the agent builder (see GET .../builder).",
    "GET /dev/apps/{}/tests": "ADK's agent tests: session recordings replayed by pytest "
    "through google-adk's own test harness; Eventide's replay of recorded conversations is "
    "its evals (the eval-sets routes, `eventide eval`).",
    "POST /dev/apps/{}/tests/rebuild": "ADK's agent tests (see GET .../tests).",
    "POST /dev/apps/{}/tests/run": "ADK's agent tests (see GET .../tests).",
    "GET /dev/apps/{}/tests/{}": "ADK's agent tests (see GET .../tests).",
    "PUT /dev/apps/{}/tests/{}": "ADK's agent tests (see GET .../tests).",
    "DELETE /dev/apps/{}/tests/{}": "ADK's agent tests (see GET .../tests).",
}


_PARAM = re.compile(r"\{[^}]*\}")


def _key(method: str, path: str) -> str:
    """``METHOD /path`` with each path parameter as ``{}`` (the names differ, e.g.
    ``{artifact_name:path}`` and ``{name:path}``)."""
    return f"{method} {_PARAM.sub('{}', path)}"


def _adk_routes(agents_dir: Path) -> set[str]:
    listed = subprocess.run(
        [str(adk_python()), "-c", _LIST_ADK_ROUTES, str(agents_dir)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=agents_dir,
    )
    return {_key(method, path) for method, path in json.loads(listed.stdout)}


def _eventide_routes() -> set[str]:
    agent = LlmAgent(name="a", model=ScriptedModel(responses=[]), instruction="-")
    api = create_app(apps={"a": App(name="a", root_agent=agent)}, web=True)
    keys: set[str] = set()
    for route in api.routes:
        if isinstance(route, WebSocketRoute):
            keys.add(_key("WEBSOCKET", route.path))
        elif isinstance(route, Mount):
            keys.add(_key("MOUNT", route.path))
        elif isinstance(route, Route):
            keys |= {_key(m, route.path) for m in route.methods or () if m != "HEAD"}
    return keys


def test_every_adk_route_is_served_or_excluded_with_a_reason(tmp_path: Path) -> None:
    adk = _adk_routes(tmp_path)
    eventide = _eventide_routes()
    # The list is read from google-adk, not assumed: its API and developer routes are there.
    assert {"POST /run_sse", "WEBSOCKET /run_live", "GET /dev/apps/{}/eval-results"} <= adk
    assert len(adk) > 60
    missing = sorted(adk - eventide - set(EXCLUDED))
    assert missing == [], f"ADK routes Eventide does not serve nor exclude: {missing}"
    # Every exclusion is a real ADK route that Eventide indeed does not serve.
    assert sorted(set(EXCLUDED) - adk) == []
    assert sorted(set(EXCLUDED) & eventide) == []
