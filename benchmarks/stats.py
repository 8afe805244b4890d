"""Medians, spread and pairwise ratios, computed the same way for every metric."""

from __future__ import annotations

import statistics
from typing import Any

__all__ = ["pairwise_ratio", "summarize"]


def summarize(samples: list[float]) -> dict[str, Any]:
    """Median, quartiles (IQR), min, max and count of pooled samples."""
    ordered = sorted(samples)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return {
        "median": statistics.median(ordered),
        "q1": q1,
        "q3": q3,
        "min": ordered[0],
        "max": ordered[-1],
        "n": len(ordered),
    }


def pairwise_ratio(
    eventide_rounds: list[list[float]], adk_rounds: list[list[float]]
) -> dict[str, Any] | None:
    """google-adk's median over Eventide's, round by round (both measured in the same round).

    Returns the median of the per-round ratios with their min and max, or None when a round
    is missing a side or a median is not positive.
    """
    ratios = []
    for ours, theirs in zip(eventide_rounds, adk_rounds, strict=False):
        if not ours or not theirs:
            continue
        ours_median = statistics.median(ours)
        if ours_median <= 0:
            return None
        ratios.append(statistics.median(theirs) / ours_median)
    if not ratios:
        return None
    return {
        "median": statistics.median(ratios),
        "min": min(ratios),
        "max": max(ratios),
        "rounds": len(ratios),
    }
