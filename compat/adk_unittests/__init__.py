"""The conformance runner: google-adk's own unit tests (v2.1.0) run on google-adk 2.13 and on
Eventide through an import map, each test classified (pass / fails on public API / uses
google-adk internals / not supported), with a table by area. See ``README.md`` beside this
file."""
