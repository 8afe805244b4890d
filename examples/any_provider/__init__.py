"""Any provider: one agent, one tool, and a model chosen by a single string.

See ``agent.py``; ``python -m examples.any_provider "What is the weather in Oslo?"`` asks it.
"""
