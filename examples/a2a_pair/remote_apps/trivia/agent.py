"""The remote half of the A2A example: a trivia agent served by ``eventide api-server --a2a``.

Its model is ``EVENTIDE_MODEL`` (or ``gemini-2.5-flash``); with no provider key the server
runs it on the offline demo model, which still calls its real tools.
"""

from __future__ import annotations

import os

from eventide import LlmAgent

_CAPITALS = {"france": "Paris", "italy": "Rome", "japan": "Tokyo", "kenya": "Nairobi"}
_POPULATIONS = {"france": 68_000_000, "italy": 59_000_000, "japan": 124_000_000}


def capital_of(country: str) -> dict[str, str]:
    """Look up the capital of a country.

    Args:
        country: the country's English name, e.g. France.
    """
    return {"country": country, "capital": _CAPITALS.get(country.lower(), "unknown")}


def population_of(country: str) -> dict[str, object]:
    """Look up the population of a country.

    Args:
        country: the country's English name, e.g. Japan.
    """
    return {"country": country, "population": _POPULATIONS.get(country.lower(), "unknown")}


root_agent = LlmAgent(
    name="trivia",
    description="Answers trivia about countries: their capitals and populations.",
    model=os.environ.get("EVENTIDE_MODEL", "gemini-2.5-flash"),
    instruction="Answer questions about countries with your tools. Be brief.",
    tools=[capital_of, population_of],
)
