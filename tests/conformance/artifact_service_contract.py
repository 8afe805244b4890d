"""The artifact service contract, run against every backend.

A test module subclasses :class:`ArtifactServiceContract` and provides an
``artifact_service`` fixture (parametrized over the backends). Each test starts from an
empty store.
"""

from __future__ import annotations

import time
from typing import TypedDict

import pytest

from eventide import types
from eventide.artifacts.base_artifact_service import BaseArtifactService, tombstone
from eventide.errors import InvalidArtifactNameError

APP = "app"
USER = "alice"
SESSION = "s1"


class Where(TypedDict):
    """Which session's artifacts: the keyword arguments every artifact call takes."""

    app_name: str
    user_id: str
    session_id: str


WHERE: Where = {"app_name": APP, "user_id": USER, "session_id": SESSION}

ALL_BYTES = bytes(range(256)) * 3


def text(value: str) -> types.Part:
    return types.Part(text=value)


async def save(
    service: BaseArtifactService, filename: str, part: types.Part, *, session_id: str = SESSION
) -> int:
    return await service.save_artifact(
        app_name=APP, user_id=USER, session_id=session_id, filename=filename, artifact=part
    )


class ArtifactServiceContract:
    """What every ``BaseArtifactService`` must do (spec: artifact versions recorded in
    ``artifact_delta`` are the numbers these services return)."""

    async def test_versions_count_up_from_zero(self, artifact_service: BaseArtifactService) -> None:
        """Each save of a name is a new version: 0, 1, 2, ... (spec: artifact_delta maps a
        file name to the version saved)."""
        versions = [await save(artifact_service, "report.txt", text(f"v{i}")) for i in range(3)]
        assert versions == [0, 1, 2]
        assert await artifact_service.list_versions(**WHERE, filename="report.txt") == [0, 1, 2]

    async def test_load_latest_specific_and_missing(
        self, artifact_service: BaseArtifactService
    ) -> None:
        for i in range(3):
            await save(artifact_service, "report.txt", text(f"v{i}"))
        load = artifact_service.load_artifact
        assert await load(**WHERE, filename="report.txt") == text("v2")
        assert [await load(**WHERE, filename="report.txt", version=v) for v in (0, 1, 2)] == [
            text("v0"),
            text("v1"),
            text("v2"),
        ]
        assert await load(**WHERE, filename="report.txt", version=3) is None
        assert await load(**WHERE, filename="report.txt", version=-1) is None
        assert await load(**WHERE, filename="missing.txt") is None
        assert await load(**WHERE, filename="missing.txt", version=0) is None

    async def test_a_tombstone_version_makes_the_file_absent_keeping_its_history(
        self, artifact_service: BaseArtifactService
    ) -> None:
        """Rule (rewind of an artifact that did not exist): a version holding a tombstone
        loads as absent, latest or by number, and the file leaves ``list_artifact_keys``;
        ``list_versions`` keeps every version, earlier ones stay readable, and a later save
        makes the file present again."""
        load = artifact_service.load_artifact
        for name in ("draft.txt", "user:draft.txt"):
            await save(artifact_service, name, text("v0"))
            assert await save(artifact_service, name, tombstone()) == 1
            assert await load(**WHERE, filename=name) is None
            assert await load(**WHERE, filename=name, version=1) is None
            assert await load(**WHERE, filename=name, version=0) == text("v0")
            assert await artifact_service.list_versions(**WHERE, filename=name) == [0, 1]
        await save(artifact_service, "kept.txt", text("k"))
        assert await artifact_service.list_artifact_keys(**WHERE) == ["kept.txt"]

        assert await save(artifact_service, "draft.txt", text("back")) == 2
        assert await load(**WHERE, filename="draft.txt") == text("back")
        assert await load(**WHERE, filename="draft.txt", version=1) is None
        assert await artifact_service.list_artifact_keys(**WHERE) == ["draft.txt", "kept.txt"]
        # Only the reserved marker is a tombstone: other empty parts are ordinary versions.
        empty = types.Part(inline_data=types.Blob(mime_type="application/octet-stream", data=b""))
        await save(artifact_service, "empty.bin", empty)
        assert await load(**WHERE, filename="empty.bin") == empty

    async def test_each_version_keeps_its_metadata(
        self, artifact_service: BaseArtifactService
    ) -> None:
        """Custom metadata, save time, MIME type (bytes only) and a canonical URI per version,
        as google-adk describes a version; tombstoned and missing versions have none."""
        before = time.time()
        blob = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))
        await artifact_service.save_artifact(
            **WHERE, filename="chart.png", artifact=blob, custom_metadata={"source": "q1"}
        )
        await artifact_service.save_artifact(**WHERE, filename="chart.png", artifact=text("v1"))
        first, second = await artifact_service.list_artifact_versions(**WHERE, filename="chart.png")
        assert (first.version, first.custom_metadata, first.mime_type) == (
            0,
            {"source": "q1"},
            "image/png",
        )
        assert (second.version, second.custom_metadata, second.mime_type) == (1, {}, None)
        assert first.create_time is not None and second.create_time is not None
        assert before <= first.create_time <= second.create_time <= time.time()
        assert first.canonical_uri != second.canonical_uri
        assert first.canonical_uri.split(":", 1)[0] in ("memory", "file")
        latest = await artifact_service.get_artifact_version(**WHERE, filename="chart.png")
        assert latest == second
        assert (
            await artifact_service.get_artifact_version(**WHERE, filename="chart.png", version=0)
            == first
        )
        assert (
            await artifact_service.get_artifact_version(**WHERE, filename="chart.png", version=5)
            is None
        )
        assert await artifact_service.get_artifact_version(**WHERE, filename="nope") is None
        await artifact_service.save_artifact(**WHERE, filename="chart.png", artifact=tombstone())
        assert await artifact_service.get_artifact_version(**WHERE, filename="chart.png") is None
        listed = await artifact_service.list_artifact_versions(**WHERE, filename="chart.png")
        assert [v.version for v in listed] == [0, 1]

    async def test_versions_of_missing_file_are_empty(
        self, artifact_service: BaseArtifactService
    ) -> None:
        assert await artifact_service.list_versions(**WHERE, filename="nothing") == []

    async def test_keys_are_the_sessions_own_and_the_users_sorted(
        self, artifact_service: BaseArtifactService
    ) -> None:
        await save(artifact_service, "b.txt", text("b"))
        await save(artifact_service, "a.txt", text("a"))
        await save(artifact_service, "a.txt", text("a again"))
        await save(artifact_service, "user:profile.json", text("{}"))
        await save(artifact_service, "other.txt", text("x"), session_id="s2")
        keys = await artifact_service.list_artifact_keys(**WHERE)
        assert keys == ["a.txt", "b.txt", "user:profile.json"]
        other = await artifact_service.list_artifact_keys(
            app_name=APP, user_id=USER, session_id="s2"
        )
        assert other == ["other.txt", "user:profile.json"]

    async def test_session_files_are_private_to_their_session(
        self, artifact_service: BaseArtifactService
    ) -> None:
        await save(artifact_service, "notes.txt", text("mine"))
        assert (
            await artifact_service.load_artifact(
                app_name=APP, user_id=USER, session_id="s2", filename="notes.txt"
            )
            is None
        )
        assert await save(artifact_service, "notes.txt", text("theirs"), session_id="s2") == 0

    async def test_user_files_are_shared_across_the_users_sessions(
        self, artifact_service: BaseArtifactService
    ) -> None:
        """``user:`` names belong to the user, across all their sessions of the app."""
        assert await save(artifact_service, "user:avatar.png", text("one")) == 0
        assert await save(artifact_service, "user:avatar.png", text("two"), session_id="s2") == 1
        for session_id in ("s1", "s2", "s3"):
            loaded = await artifact_service.load_artifact(
                app_name=APP, user_id=USER, session_id=session_id, filename="user:avatar.png"
            )
            assert loaded == text("two")
        versions = await artifact_service.list_versions(
            app_name=APP, user_id=USER, session_id="s3", filename="user:avatar.png"
        )
        assert versions == [0, 1]

    async def test_user_files_are_not_shared_across_users_or_apps(
        self, artifact_service: BaseArtifactService
    ) -> None:
        await save(artifact_service, "user:avatar.png", text("alice's"))
        for app_name, user_id in ((APP, "bob"), ("other_app", USER)):
            where: Where = {"app_name": app_name, "user_id": user_id, "session_id": SESSION}
            assert await artifact_service.load_artifact(**where, filename="user:avatar.png") is None
            assert await artifact_service.list_artifact_keys(**where) == []
            assert await artifact_service.list_versions(**where, filename="user:avatar.png") == []

    async def test_delete_removes_every_version(
        self, artifact_service: BaseArtifactService
    ) -> None:
        await save(artifact_service, "draft.txt", text("0"))
        await save(artifact_service, "draft.txt", text("1"))
        await save(artifact_service, "keep.txt", text("k"))
        await artifact_service.delete_artifact(**WHERE, filename="draft.txt")
        assert await artifact_service.load_artifact(**WHERE, filename="draft.txt") is None
        assert await artifact_service.list_versions(**WHERE, filename="draft.txt") == []
        assert await artifact_service.list_artifact_keys(**WHERE) == ["keep.txt"]
        # A file saved again after deletion starts over.
        assert await save(artifact_service, "draft.txt", text("new")) == 0

    async def test_delete_of_user_file_and_of_missing_file(
        self, artifact_service: BaseArtifactService
    ) -> None:
        await save(artifact_service, "user:prefs", text("p"))
        await artifact_service.delete_artifact(
            app_name=APP, user_id=USER, session_id="s9", filename="user:prefs"
        )
        assert await artifact_service.list_artifact_keys(**WHERE) == []
        await artifact_service.delete_artifact(**WHERE, filename="never-saved.txt")  # no error
        assert await artifact_service.list_artifact_keys(**WHERE) == []

    @pytest.mark.parametrize(
        "part",
        [
            pytest.param(types.Part.from_bytes(data=ALL_BYTES, mime_type="image/png"), id="bytes"),
            pytest.param(
                types.Part.from_bytes(data=b"", mime_type="application/x-empty"), id="empty-bytes"
            ),
            pytest.param(
                types.Part(
                    inline_data=types.Blob(
                        data=b"%PDF-1.7\r\n\x00", mime_type="application/pdf", display_name="q3.pdf"
                    )
                ),
                id="bytes-with-display-name",
            ),
            pytest.param(text("héllo wörld ✓ 中文\n\r\n\ttabs and \x00 nul"), id="text"),
            pytest.param(text(""), id="empty-text"),
            pytest.param(
                types.Part(
                    file_data=types.FileData(file_uri="gs://b/o.png", mime_type="image/png")
                ),
                id="file-data",
            ),
            pytest.param(types.Part(text="thinking", thought=True), id="thought-text"),
        ],
    )
    async def test_parts_round_trip_exactly(
        self, artifact_service: BaseArtifactService, part: types.Part
    ) -> None:
        """What is saved is what loads: bytes, MIME type, text, every field."""
        await save(artifact_service, "blob", part)
        loaded = await artifact_service.load_artifact(**WHERE, filename="blob")
        assert loaded == part
        assert loaded is not part

    async def test_names_with_folders_and_odd_characters(
        self, artifact_service: BaseArtifactService
    ) -> None:
        names = ["docs", "docs/report.txt", "docs/sub/deep.md", ".hidden", "50% off?.txt", "a b#c"]
        for name in names:
            await save(artifact_service, name, text(name))
        assert await artifact_service.list_artifact_keys(**WHERE) == sorted(names)
        for name in names:
            assert await artifact_service.load_artifact(**WHERE, filename=name) == text(name)

    @pytest.mark.parametrize(
        "filename",
        [
            "../x",
            "/abs",
            "",
            "a/../../b",
            "user:../x",
            "user:",
            "user:/etc/passwd",
            "a/./b",
            "a//b",
            "C:\\windows",
            "..\\up",
            "nul\x00byte",
            "   ",
        ],
    )
    async def test_bad_names_are_rejected_and_nothing_is_written(
        self, artifact_service: BaseArtifactService, filename: str
    ) -> None:
        """Names that are empty, absolute or escape their folder raise InvalidArtifactNameError
        before anything is stored."""
        with pytest.raises(InvalidArtifactNameError) as raised:
            await save(artifact_service, filename, text("evil"))
        assert raised.value.filename == filename
        assert await artifact_service.list_artifact_keys(**WHERE) == []
