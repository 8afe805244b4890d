"""``python -m eventide.cli``: the same as the ``eventide`` command."""

from eventide.cli.main import main

main()
