"""How the ``eventide`` command reports: its two consoles and the errors it words for people
(exit code 1 for a runtime failure, 2 for a usage error; see :mod:`eventide.cli.main`)."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.text import Text

from eventide.cli.run_command import EXIT_ERROR, EXIT_USAGE

__all__ = ["consoles", "failure", "usage_failure"]


def consoles() -> tuple[Console, Console]:
    return Console(highlight=False, soft_wrap=True), Console(
        stderr=True, highlight=False, soft_wrap=True
    )


class _Failure(click.ClickException):
    """A runtime error already worded for people (exit code 1)."""

    exit_code = EXIT_ERROR

    def show(self, file: Any = None) -> None:
        _, errors = consoles()
        errors.print(Text(f"Error: {self.format_message()}", style="bold red"))


class _UsageFailure(_Failure):
    """A usage error already worded for people (exit code 2)."""

    exit_code = EXIT_USAGE


def failure(message: str) -> click.ClickException:
    """A runtime error worded for people, to raise from a command (exit code 1). The click
    presentation classes stay private here: errors users catch live in ``eventide.errors``."""
    return _Failure(message)


def usage_failure(message: str) -> click.ClickException:
    """A usage error worded for people, to raise from a command (exit code 2)."""
    return _UsageFailure(message)
