"""A scripted conversation through google-adk's own client for its web server
(``AdkWebServerClient``), run by the google-adk environment's Python against the URL given
as the first argument. Prints what it saw as one JSON object.

Not a test module: tests/server/test_adk_client.py runs it in a subprocess.
"""

import asyncio
import json
import sys
from typing import Any

import httpx
from google.adk.cli.adk_web_server import RunAgentRequest
from google.adk.cli.conformance.adk_web_server_client import AdkWebServerClient
from google.genai import types

APP, USER = "weather", "ann"


def summary(event: Any) -> dict[str, Any]:
    parts = event.content.parts if event.content and event.content.parts else []
    return {
        "author": event.author,
        "partial": bool(event.partial),
        "text": "".join(p.text or "" for p in parts),
        "calls": [p.function_call.name for p in parts if p.function_call],
        "responses": [p.function_response.name for p in parts if p.function_response],
        "state_delta": event.actions.state_delta,
    }


async def main(url: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with AdkWebServerClient(base_url=url) as client:
        out["version"] = await client.get_version_data()
        session = await client.create_session(app_name=APP, user_id=USER, state={"units": "C"})
        out["created"] = [session.app_name, session.user_id, session.state]
        turns = []
        for text, streaming in (("Weather in Lyon?", True), ("Thanks!", False)):
            request = RunAgentRequest(
                app_name=APP,
                user_id=USER,
                session_id=session.id,
                new_message=types.Content(role="user", parts=[types.Part(text=text)]),
                streaming=streaming,
            )
            turns.append([summary(e) async for e in client.run_agent(request)])
        out["turns"] = turns
        updated = await client.update_session(
            app_name=APP, user_id=USER, session_id=session.id, state_delta={"mood": "happy"}
        )
        out["updated_state"] = updated.state
        fetched = await client.get_session(app_name=APP, user_id=USER, session_id=session.id)
        out["authors"] = [e.author for e in fetched.events]
        versions = await client.list_artifact_versions_metadata(
            app_name=APP, user_id=USER, session_id=session.id, artifact_name="forecast.txt"
        )
        out["versions"] = [v.version for v in versions]
        one = await client.get_artifact_version_metadata(
            app_name=APP,
            user_id=USER,
            session_id=session.id,
            artifact_name="forecast.txt",
            version=0,
        )
        out["version_0_uri"] = one.canonical_uri
        await client.delete_session(app_name=APP, user_id=USER, session_id=session.id)
        try:
            await client.get_session(app_name=APP, user_id=USER, session_id=session.id)
            out["after_delete"] = 200
        except httpx.HTTPStatusError as exc:
            out["after_delete"] = exc.response.status_code
    return out


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1]))))
