"""Tools: what models can call."""

from eventide.tools.agent_tool import AgentTool
from eventide.tools.base_tool import BaseTool
from eventide.tools.base_toolset import BaseToolset
from eventide.tools.builtin_tools import exit_loop, load_artifacts, load_memory, preload_memory
from eventide.tools.function_tool import FunctionTool
from eventide.tools.long_running_tool import LongRunningFunctionTool

__all__ = [
    "AgentTool",
    "BaseTool",
    "BaseToolset",
    "FunctionTool",
    "LongRunningFunctionTool",
    "exit_loop",
    "load_artifacts",
    "load_memory",
    "preload_memory",
]
