"""Agents: the execution logic that yields events."""

from eventide.agents.base_agent import BaseAgent

__all__ = ["BaseAgent"]
