"""Agent apps: the unit the CLI and the HTTP server load."""

from eventide.apps.app import App, ResumabilityConfig

__all__ = ["App", "ResumabilityConfig"]
