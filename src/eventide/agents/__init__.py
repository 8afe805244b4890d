"""Agents: the execution logic that yields events."""

from eventide.agents.base_agent import BaseAgent
from eventide.agents.llm_agent import Agent, LlmAgent
from eventide.agents.loop_agent import LoopAgent
from eventide.agents.parallel_agent import ParallelAgent
from eventide.agents.sequential_agent import SequentialAgent

__all__ = ["Agent", "BaseAgent", "LlmAgent", "LoopAgent", "ParallelAgent", "SequentialAgent"]
