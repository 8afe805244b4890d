"""Mapping MCP call results (the SDK's own result objects) to function responses."""

from __future__ import annotations

import mcp_types

from eventide.tools.mcp_tool import call_result_to_response


def test_result_mapping() -> None:
    """Text joins into {"result": ...}; structured content wins over its text rendering;
    non-text blocks are listed under "content"; errors become {"error": ...} (with a
    message even when the server gave none)."""
    text = mcp_types.TextContent(type="text", text="line 1")
    more = mcp_types.TextContent(type="text", text="line 2")
    image = mcp_types.ImageContent(type="image", data="aGk=", mime_type="image/png")
    result = mcp_types.CallToolResult
    assert call_result_to_response(result(content=[text, more])) == {"result": "line 1\nline 2"}
    assert call_result_to_response(result(content=[text], structured_content={"rows": [1, 2]})) == {
        "rows": [1, 2]
    }
    assert call_result_to_response(result(content=[text, image])) == {
        "result": "line 1",
        "content": [{"type": "image", "data": "aGk=", "mimeType": "image/png"}],
    }
    assert call_result_to_response(result(content=[], is_error=True)) == {
        "error": "The MCP tool reported an error without a message."
    }
    assert call_result_to_response(result(content=[text], is_error=True)) == {"error": "line 1"}
    assert call_result_to_response(result(content=[])) == {"result": ""}
