"""Eventide's benchmark suite: each scenario runs for Eventide and for google-adk in the same
run, with the same scripted fake model, and reports medians, spread and pairwise ratios.

Run it with ``python -m benchmarks`` (``make bench``); see ``benchmarks/README.md``.
"""
