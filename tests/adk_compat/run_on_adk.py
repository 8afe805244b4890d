"""Run the compatibility scenarios on google-adk itself (the opt-in job).

Usage, from the repository root, with a Python that has google-adk 2.13 installed (never
Eventide's virtualenv)::

    /path/to/adk-venv/bin/python -m tests.adk_compat.run_on_adk

It prints one line per scenario and exits 1 when any fails: a failure means an expectation
in ``scenarios.py`` is not google-adk's behaviour. google-adk is installed from the package
registry (``pip install google-adk==2.13.0``), never vendored.
"""

from __future__ import annotations

import logging
import sys
import tempfile
import warnings
from pathlib import Path

from tests.adk_compat.frameworks import adk_framework
from tests.adk_compat.scenarios import run_all


def main() -> int:
    warnings.simplefilter("ignore")
    # google-adk logs a warning per model call of a test model; scenarios that check a
    # warning capture it themselves.
    logging.getLogger().addHandler(logging.NullHandler())
    logging.getLogger().setLevel(logging.ERROR)
    with tempfile.TemporaryDirectory() as tmp:
        results = run_all(adk_framework(), Path(tmp))
    for name, error in results:
        print(f"{'PASS' if error is None else 'FAIL'} {name}" + (f": {error}" if error else ""))
    failed = sum(1 for _, error in results if error is not None)
    print(f"{len(results) - failed} passed, {failed} failed on google-adk")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
