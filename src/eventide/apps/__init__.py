"""Agent apps: the unit the CLI and the HTTP server load."""

from eventide.apps.app import App

__all__ = ["App"]
