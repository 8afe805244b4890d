"""The conformance runner: google-adk's own unit tests (v2.1.0) run on google-adk 2.13 and on
Eventide through an import map, each test classified (pass / fails on public API / public API
of a feature Eventide lacks / uses google-adk internals / live, not supported), with a table
by area. ``make adk-conformance`` runs it; ``docs/adk-compatibility.md`` explains it and keeps
its figures."""
