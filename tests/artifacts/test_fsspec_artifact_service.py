"""FsspecArtifactService beyond the shared contract: URLs, object format, torn writes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pytest

from eventide import types
from eventide.artifacts.fsspec_artifact_service import FsspecArtifactService
from eventide.errors import ConfigurationError, CorruptRecordError
from tests.conformance.artifact_service_contract import Where

WHERE: Where = {"app_name": "app", "user_id": "alice", "session_id": "s1"}


@pytest.fixture
def memory_url() -> Iterator[str]:
    url = f"memory://eventide-tests/{uuid.uuid4().hex}"
    yield url
    fs = fsspec.filesystem("memory")
    if fs.exists(url):
        fs.rm(url, recursive=True)


def write_bytes(path: Path, data: bytes) -> None:
    path.write_bytes(data)


async def test_unknown_scheme_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="nosuchscheme"):
        FsspecArtifactService("nosuchscheme://bucket/prefix")


async def test_each_version_is_one_object_under_the_url(memory_url: str) -> None:
    """One object per version carries data and metadata, so one atomic PUT publishes both."""
    service = FsspecArtifactService(memory_url)
    for i in range(2):
        await service.save_artifact(
            **WHERE,
            filename="user:img.png",
            artifact=types.Part.from_bytes(data=bytes([i]) * 10, mime_type="image/png"),
        )
    fs = fsspec.filesystem("memory")
    prefix = fs._strip_protocol(memory_url)
    assert sorted(fs.find(prefix)) == [
        f"{prefix}/app/alice/user/img.png/0",
        f"{prefix}/app/alice/user/img.png/1",
    ]
    blob = fs.cat_file(f"{prefix}/app/alice/user/img.png/1")
    assert blob.endswith(b"\n" + b"\x01" * 10)
    assert b'"mime_type": "image/png"' in blob


async def test_torn_write_is_not_read_as_a_version(tmp_path: Path) -> None:
    """On a file system without atomic object writes, an object cut short (a crash or a
    write in flight) is skipped: the latest readable version is returned instead."""
    service = FsspecArtifactService(tmp_path.as_uri())
    for text in ("v0", "v1-" + "x" * 100):
        await service.save_artifact(**WHERE, filename="a.txt", artifact=types.Part(text=text))
    obj = tmp_path / "app" / "alice" / "sessions" / "s1" / "a.txt" / "1"
    full = obj.read_bytes()
    for cut in (len(full) - 10, full.index(b"\n") + 5, 5):
        write_bytes(obj, full[:cut])
        assert await service.load_artifact(**WHERE, filename="a.txt") == types.Part(text="v0")
        assert await service.load_artifact(**WHERE, filename="a.txt", version=1) is None
    write_bytes(obj, full)
    assert await service.load_artifact(**WHERE, filename="a.txt", version=1) is not None


async def test_foreign_object_is_a_clear_error(tmp_path: Path) -> None:
    service = FsspecArtifactService(tmp_path.as_uri())
    await service.save_artifact(**WHERE, filename="a.txt", artifact=types.Part(text="v0"))
    obj = tmp_path / "app" / "alice" / "sessions" / "s1" / "a.txt" / "0"
    write_bytes(obj, b"GIF89a something else entirely")
    with pytest.raises(CorruptRecordError, match="not an Eventide artifact"):
        await service.load_artifact(**WHERE, filename="a.txt")


async def test_storage_options_reach_the_backend(tmp_path: Path) -> None:
    """Extra keyword arguments configure the fsspec backend (here: local auto_mkdir)."""
    service = FsspecArtifactService(tmp_path.as_uri(), auto_mkdir=True)
    assert service._fs.auto_mkdir is True
    assert await service.save_artifact(**WHERE, filename="f", artifact=types.Part(text="x")) == 0
