"""Tools: what models can call."""

from eventide.tools.base_tool import BaseTool
from eventide.tools.base_toolset import BaseToolset

__all__ = ["BaseTool", "BaseToolset"]
