"""Plugins: hooks applied across every agent, model call and tool call of a Runner."""

from eventide.plugins.base_plugin import BasePlugin
from eventide.plugins.plugin_manager import PluginManager

__all__ = ["BasePlugin", "PluginManager"]
