"""Find the dev UI that ships inside an installed google-adk, to serve it in front of
Eventide (``eventide web --adk-ui``). Nothing of it is copied into Eventide."""

from __future__ import annotations

import subprocess
from pathlib import Path

from eventide.errors import ConfigurationError

__all__ = ["find_adk_ui"]

# Where google-adk keeps its built Angular UI, relative to the google.adk package.
_UI_FOLDER = ("cli", "browser")
_LOCATE = (
    "import importlib.util; s = importlib.util.find_spec('google.adk'); "
    "print(s.submodule_search_locations[0] if s and s.submodule_search_locations else '')"
)
_HOW = "`pip install google-adk` (or pass --adk-python with a Python that has it)"


def find_adk_ui(python: str | Path | None = None) -> Path:
    """The folder of ADK's built dev UI (the one holding its ``index.html``).

    Args:
        python: the interpreter of another environment to look in; this one when None.

    Raises:
        ConfigurationError: google-adk is not installed there, or its UI is not where
            google-adk keeps it.
    """
    if python is None:
        import importlib.util

        spec = importlib.util.find_spec("google.adk")
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        package = locations[0] if locations else ""
    else:
        try:
            found = subprocess.run(
                [str(python), "-c", _LOCATE],
                capture_output=True,
                text=True,
                timeout=60,
                check=True,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise ConfigurationError(f"Could not ask {python} where google-adk is: {exc}") from exc
        package = found.stdout.strip()
    where = "this Python" if python is None else str(python)
    if not package:
        raise ConfigurationError(f"google-adk is not installed for {where}: {_HOW}.")
    folder = Path(package).joinpath(*_UI_FOLDER)
    if not (folder / "index.html").is_file():
        raise ConfigurationError(
            f"The installed google-adk ({package}) has no built dev UI at {folder}; "
            "install a google-adk release that ships it."
        )
    return folder
