"""google-adk's error classes that ADK apps and tests catch: ``InputValidationError`` and
``AlreadyExistsError`` (spec: errors live in ``eventide.errors``, grouped by who acts; these
two are usage errors, and ``ValueError``s as on google-adk where it is one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from eventide import InMemorySessionService, types
from eventide.artifacts.file_artifact_service import FileArtifactService
from eventide.errors import (
    AlreadyExistsError,
    InputValidationError,
    InvalidArtifactNameError,
    UsageError,
)


def test_the_classes_carry_google_adks_defaults_and_message_attribute() -> None:
    assert issubclass(InputValidationError, ValueError)
    assert issubclass(AlreadyExistsError, UsageError)
    assert InputValidationError().message == "Invalid input." == str(InputValidationError())
    assert AlreadyExistsError().message == "The resource already exists."
    assert AlreadyExistsError("taken").message == "taken"


async def test_a_taken_session_id_raises_already_exists() -> None:
    service = InMemorySessionService()
    await service.create_session(app_name="app", user_id="u", session_id="s")
    with pytest.raises(AlreadyExistsError, match="'s' already exists"):
        await service.create_session(app_name="app", user_id="u", session_id="s")


async def test_a_path_traversing_artifact_name_raises_input_validation(tmp_path: Path) -> None:
    service = FileArtifactService(tmp_path / "artifacts")
    with pytest.raises(InputValidationError, match="path traversal") as raised:
        await service.save_artifact(
            app_name="app",
            user_id="u",
            session_id="s",
            filename="../../escape.txt",
            artifact=types.Part(text="x"),
        )
    assert isinstance(raised.value, InvalidArtifactNameError)
    assert not (tmp_path / "escape.txt").exists()
