"""Support desk: a multi-agent example app.

A ``triage`` agent hands each request to ``billing`` or ``tech``; both have real function
tools (invoice look-up, service status, tickets written to state). ``tech`` can pass an
incident to ``notice_review``, a loop in which a ``drafter`` writes a customer notice and a
``critic`` sends it back until it is good enough (then calls ``exit_loop``).

- ``agent.py`` exposes ``root_agent`` (model from ``EVENTIDE_MODEL``) for the CLI and server.
- ``python -m examples.support_desk`` plays a scripted four-turn conversation offline
  (``ScriptedModel``s, sessions in SQLite); ``--live`` sends the same messages to a real
  model when a provider key is set.
"""
