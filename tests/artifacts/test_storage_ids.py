"""The file-backed artifact services refuse app, user and session ids that are not one
plain folder name (empty, '.', '..', '/', '\\', NUL), as google-adk's FileArtifactService
tests expect, on every call and before anything is written."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypedDict, cast

import fsspec
import pytest

from eventide import types
from eventide.artifacts.base_artifact_service import BaseArtifactService
from eventide.artifacts.file_artifact_service import FileArtifactService
from eventide.artifacts.fsspec_artifact_service import FsspecArtifactService
from eventide.errors import InputValidationError, InvalidArtifactNameError


def memory_fs() -> Any:
    """fsspec's in-memory file system (fsspec has no type information)."""
    return cast("Callable[[str], Any]", fsspec.filesystem)("memory")


BAD_IDS = [
    "",
    "   ",
    ".",
    "..",
    "../escape",
    "foo/../../bar",
    "valid/../..",
    "has/slash",
    "back\\slash",
    "null\x00byte",
]
# Ids that look odd but are one folder name once encoded: accepted.
GOOD_IDS = ["...", ".hidden", "x..y", "user:123", "C:", "a b%2F", "é€", "a\tb"]
ARGUMENTS = ["app_name", "user_id", "session_id"]


@pytest.fixture(params=["file", "fsspec"])
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseArtifactService]:
    if request.param == "file":
        yield FileArtifactService(root_dir=tmp_path / "artifacts")
        return
    url = f"memory://eventide-tests/{uuid.uuid4().hex}"
    yield FsspecArtifactService(url)
    fs = memory_fs()
    if fs.exists(url):
        fs.rm(url, recursive=True)


class Ids(TypedDict):
    app_name: str
    user_id: str
    session_id: str | None


def where(argument: str, value: str | None) -> Ids:
    ids: Ids = {"app_name": "myapp", "user_id": "user123", "session_id": "sess1"}
    if argument == "session_id":
        ids["session_id"] = value
    else:
        assert value is not None
        ids[argument] = value  # type: ignore[literal-required]
    return ids


def stored(service: BaseArtifactService) -> list[str]:
    if isinstance(service, FileArtifactService):
        if not service.root.exists():
            return []
        return sorted(str(p) for p in service.root.rglob("*"))
    assert isinstance(service, FsspecArtifactService)
    fs = memory_fs()
    base: str = service._base  # pyright: ignore[reportPrivateUsage]
    return sorted(cast("list[str]", fs.find(base))) if fs.exists(base) else []


@pytest.mark.parametrize("value", BAD_IDS)
@pytest.mark.parametrize("argument", ARGUMENTS)
async def test_save_refuses_a_bad_id_and_writes_nothing(
    service: BaseArtifactService, argument: str, value: str
) -> None:
    with pytest.raises(InputValidationError) as caught:
        await service.save_artifact(
            **where(argument, value), filename="safe.txt", artifact=types.Part(text="x")
        )
    assert not isinstance(caught.value, InvalidArtifactNameError)  # the id, not the name
    assert isinstance(caught.value, ValueError)  # as google-adk's class is
    message = caught.value.message
    assert message.startswith(f"{argument} {value!r} ")
    assert "'.' and '..'" in message and "'/'" in message and "NUL" in message
    assert stored(service) == []


def calls(service: BaseArtifactService, ids: Ids) -> dict[str, Callable[[], Awaitable[Any]]]:
    """Every other call, each given the ids it would store or read under."""
    return {
        "load_artifact": lambda: service.load_artifact(**ids, filename="f.txt"),
        "get_artifact_version": lambda: service.get_artifact_version(**ids, filename="f.txt"),
        "list_versions": lambda: service.list_versions(**ids, filename="f.txt"),
        "list_artifact_versions": lambda: service.list_artifact_versions(**ids, filename="f.txt"),
        "delete_artifact": lambda: service.delete_artifact(**ids, filename="f.txt"),
        "list_artifact_keys": lambda: service.list_artifact_keys(**ids),
    }


@pytest.mark.parametrize("argument", ARGUMENTS)
async def test_every_call_refuses_a_bad_id(service: BaseArtifactService, argument: str) -> None:
    for value in ("..", "a/b", ""):
        for name, call in calls(service, where(argument, value)).items():
            with pytest.raises(InputValidationError, match=f"^{argument} "):
                await call()
            assert stored(service) == [], name


@pytest.mark.parametrize("value", GOOD_IDS)
@pytest.mark.parametrize("argument", ARGUMENTS)
async def test_odd_but_plain_ids_are_accepted(
    service: BaseArtifactService, argument: str, value: str
) -> None:
    ids = where(argument, value)
    part = types.Part(text="kept")
    assert await service.save_artifact(**ids, filename="f.txt", artifact=part) == 0
    assert await service.load_artifact(**ids, filename="f.txt") == part
    assert await service.list_artifact_keys(**ids) == ["f.txt"]
    # Another id's folder holds nothing of it.
    assert await service.load_artifact(**where(argument, "other"), filename="f.txt") is None


async def test_a_user_file_ignores_the_session_id(service: BaseArtifactService) -> None:
    """A ``user:`` file is stored per user, so the session id it is saved from is not a
    folder name and is not checked (as on google-adk); a session file's is."""
    part = types.Part(text="shared")
    ids = where("session_id", "")
    assert await service.save_artifact(**ids, filename="user:notes", artifact=part) == 0
    assert await service.load_artifact(**where("session_id", ".."), filename="user:notes") == part
    with pytest.raises(InputValidationError, match="^session_id ''"):
        await service.save_artifact(**ids, filename="notes", artifact=part)


async def test_no_session_id_is_not_a_bad_id(service: BaseArtifactService) -> None:
    """``session_id=None`` is a call without a session, not an id: accepted as before."""
    ids = where("session_id", None)
    assert await service.list_artifact_keys(**ids) == []
    assert await service.save_artifact(**ids, filename="user:a", artifact=types.Part(text="a")) == 0
    assert await service.list_artifact_keys(**ids) == ["user:a"]


@pytest.mark.parametrize(
    "filename", ["../escape.txt", "user:../escape.txt", "/absolute/path.txt", "d/../x", "C:x"]
)
async def test_unsafe_filenames_are_still_refused(
    service: BaseArtifactService, filename: str
) -> None:
    with pytest.raises(InvalidArtifactNameError):
        await service.save_artifact(
            **where("session_id", "s"), filename=filename, artifact=types.Part(text="x")
        )
    assert stored(service) == []
