"""FileArtifactService beyond the shared contract: the on-disk layout, crashes, many writers."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from eventide import types
from eventide.artifacts.file_artifact_service import FileArtifactService
from eventide.errors import BackendError, CorruptRecordError, InvalidArtifactNameError
from tests.conformance.artifact_service_contract import Where

WHERE: Where = {"app_name": "app", "user_id": "alice", "session_id": "s1"}


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def entries(folder: Path) -> list[Path]:
    return sorted(folder.iterdir())


def run_python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_a_version_is_a_plain_file_with_its_metadata_beside_it(tmp_path: Path) -> None:
    service = FileArtifactService(tmp_path)
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    await service.save_artifact(
        **WHERE,
        filename="plots/q3.png",
        artifact=types.Part.from_bytes(data=png, mime_type="image/png"),
    )
    version = tmp_path / "app" / "alice" / "sessions" / "s1" / "plots%2Fq3.png" / "0"
    assert (version / "payload").read_bytes() == png  # the stored file is the artifact itself
    meta = json.loads((version / "meta.json").read_text())
    assert isinstance(meta.pop("create_time"), float)
    assert meta == {"kind": "bytes", "mime_type": "image/png", "custom_metadata": {}}
    assert files_under(tmp_path) == [version / "meta.json", version / "payload"]


async def test_bad_names_write_nothing_to_disk(tmp_path: Path) -> None:
    """A rejected name leaves the folder untouched: no staging folder, no file folder."""
    service = FileArtifactService(tmp_path)
    for name in ("../escape", "/etc/passwd", "", "a/../../b", "user:../../x"):
        with pytest.raises(InvalidArtifactNameError):
            await service.save_artifact(**WHERE, filename=name, artifact=types.Part(text="x"))
    assert entries(tmp_path) == []


async def test_ids_cannot_escape_the_root(tmp_path: Path) -> None:
    """Ids that are allowed but look like paths are encoded: they stay inside root.

    ('..', '/' and '\\' in an id are refused up front: tests/artifacts/test_storage_ids.py.)
    """
    root = tmp_path / "root"
    service = FileArtifactService(root)
    where: Where = {"app_name": ".tmp", "user_id": "...", "session_id": "%2e%2e%2f..%2fC:"}
    await service.save_artifact(**where, filename="f.txt", artifact=types.Part(text="x"))
    assert entries(tmp_path) == [root]  # nothing created beside root
    assert all(root in p.parents for p in files_under(tmp_path))
    assert not (root / ".tmp" / "...").exists()  # the app did not land in the staging folder
    assert await service.load_artifact(**where, filename="f.txt") == types.Part(text="x")
    assert await service.list_artifact_keys(**where) == ["f.txt"]


async def test_a_crash_before_commit_leaves_no_version(tmp_path: Path) -> None:
    """A process killed (SIGKILL) between writing a version and committing it leaves only a
    staging folder, which is never listed; the next save takes the next free number."""
    result = run_python(
        """
        import asyncio, os, signal, sys
        from eventide import types
        from eventide.artifacts.file_artifact_service import FileArtifactService

        async def main():
            service = FileArtifactService(sys.argv[1])
            where = dict(app_name="app", user_id="alice", session_id="s1")
            await service.save_artifact(**where, filename="log.txt", artifact=types.Part(text="v0"))
            # Die exactly at the commit point: data written and fsynced, rename not done.
            os.rename = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
            await service.save_artifact(**where, filename="log.txt", artifact=types.Part(text="v1"))

        asyncio.run(main())
        """,
        str(tmp_path),
    )
    assert result.returncode == -9, result.stderr
    leftovers = list((tmp_path / ".tmp").iterdir())
    assert len(leftovers) == 1 and (leftovers[0] / "payload").read_bytes() == b"v1"

    service = FileArtifactService(tmp_path)
    assert await service.list_versions(**WHERE, filename="log.txt") == [0]
    assert await service.list_artifact_keys(**WHERE) == ["log.txt"]
    assert await service.load_artifact(**WHERE, filename="log.txt") == types.Part(text="v0")
    assert (
        await service.save_artifact(**WHERE, filename="log.txt", artifact=types.Part(text="v1"))
        == 1
    )


async def test_stray_files_in_a_file_folder_are_not_versions(tmp_path: Path) -> None:
    """Half-written or foreign entries (temp files, a number without metadata) are ignored."""
    service = FileArtifactService(tmp_path)
    await service.save_artifact(**WHERE, filename="a.txt", artifact=types.Part(text="v0"))
    folder = tmp_path / "app" / "alice" / "sessions" / "s1" / "a.txt"
    (folder / ".tmp-1234").write_bytes(b"half")
    (folder / "1.partial").write_bytes(b"half")
    (folder / "7").mkdir()
    (folder / "7" / "payload").write_bytes(b"no metadata: never committed")
    (folder.parent / "orphan").mkdir()  # a file folder without any version
    assert await service.list_versions(**WHERE, filename="a.txt") == [0]
    assert await service.list_artifact_keys(**WHERE) == ["a.txt"]
    assert await service.load_artifact(**WHERE, filename="a.txt") == types.Part(text="v0")
    assert await service.load_artifact(**WHERE, filename="a.txt", version=7) is None
    # The next number skips every name already taken.
    assert (
        await service.save_artifact(**WHERE, filename="a.txt", artifact=types.Part(text="v")) == 8
    )


async def test_damaged_metadata_is_a_clear_error(tmp_path: Path) -> None:
    service = FileArtifactService(tmp_path)
    await service.save_artifact(**WHERE, filename="a.txt", artifact=types.Part(text="v0"))
    meta = tmp_path / "app" / "alice" / "sessions" / "s1" / "a.txt" / "0" / "meta.json"
    meta.write_text("{not json")
    with pytest.raises(CorruptRecordError, match="meta.json"):
        await service.load_artifact(**WHERE, filename="a.txt")
    meta.write_text('{"kind": "hologram"}')
    with pytest.raises(CorruptRecordError, match="hologram"):
        await service.load_artifact(**WHERE, filename="a.txt")


async def test_root_that_is_a_file_is_rejected(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(BackendError, match="not a folder"):
        FileArtifactService(tmp_path / "file")


async def test_concurrent_saves_in_one_process_get_distinct_versions(tmp_path: Path) -> None:
    service = FileArtifactService(tmp_path)
    versions = await asyncio.gather(
        *(
            service.save_artifact(**WHERE, filename="c.txt", artifact=types.Part(text=str(i)))
            for i in range(20)
        )
    )
    assert sorted(versions) == list(range(20))
    for i, version in enumerate(versions):
        loaded = await service.load_artifact(**WHERE, filename="c.txt", version=version)
        assert loaded == types.Part(text=str(i))


WRITER = """
    import asyncio, sys
    from eventide import types
    from eventide.artifacts.file_artifact_service import FileArtifactService
    from eventide.artifacts.fsspec_artifact_service import FsspecArtifactService

    async def main():
        kind, where, writer = sys.argv[1], sys.argv[2], sys.argv[3]
        service = FileArtifactService(where) if kind == "file" else FsspecArtifactService(where)
        for i in range(15):
            version = await service.save_artifact(
                app_name="app", user_id="alice", session_id="s1", filename="shared.bin",
                artifact=types.Part.from_bytes(data=f"{writer}:{i}".encode() * 1000,
                                               mime_type="application/octet-stream"),
            )
            print(version, f"{writer}:{i}", flush=True)

    asyncio.run(main())
"""


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["file", "fsspec_local"])
async def test_many_processes_saving_one_file_never_share_a_version(
    tmp_path: Path, kind: str
) -> None:
    """Four OS processes save the same name at once: every save gets its own version number
    (0..59, no gaps) and every version holds exactly what its writer saved."""
    where = str(tmp_path) if kind == "file" else tmp_path.as_uri()
    procs = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            textwrap.dedent(WRITER),
            kind.split("_")[0],
            where,
            f"w{n}",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        for n in range(4)
    ]
    claimed: dict[int, str] = {}
    for proc in procs:
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
        assert proc.returncode == 0, err.decode()
        for line in out.decode().splitlines():
            number, label = line.split()
            assert int(number) not in claimed, f"version {number} claimed twice"
            claimed[int(number)] = label
    assert sorted(claimed) == list(range(60))

    from eventide.artifacts.fsspec_artifact_service import FsspecArtifactService

    service = FileArtifactService(where) if kind == "file" else FsspecArtifactService(where)
    assert await service.list_versions(**WHERE, filename="shared.bin") == list(range(60))
    for version, label in claimed.items():
        part = await service.load_artifact(**WHERE, filename="shared.bin", version=version)
        assert part is not None and part.inline_data is not None
        assert part.inline_data.data == label.encode() * 1000
