"""``FsspecArtifactService``: artifact versions in any fsspec file system or object store.

``FsspecArtifactService("s3://bucket/prefix")`` works once ``s3fs`` is installed, likewise
``gs://`` with ``gcsfs`` and ``az://`` with ``adlfs``; ``memory://`` and ``file://`` need
nothing more. Keys under the URL's path::

    <app>/<user>/user/<file>/<version>
    <app>/<user>/sessions/<session>/<file>/<version>

Each version is one object: a header line, a JSON metadata line (kind, MIME type, payload
size) and the payload, so an object store's single atomic PUT publishes data and metadata
together. Path segments are percent-encoded as in :mod:`file_artifact_service`.

Version numbering across processes: object stores have no atomic rename, so a version is
claimed by *creating* its object with ``open(path, "xb")`` (create-exclusive). Where the
backend enforces that atomically (local files; S3 through ``s3fs`` conditional writes), two
writers never get the same number: the loser sees ``FileExistsError`` and takes the next.
Where a backend accepts ``"xb"`` but only checks existence first (fsspec's in-memory file
system, and any backend without conditional writes), two writers racing on the same file
within that window can claim the same number and the last one to finish wins. On a
non-atomic file system (local files through fsspec) an object may be seen while still being
written: readers check the recorded size and treat a short object as not there yet.
"""

from __future__ import annotations

import asyncio
import json
import posixpath
from collections.abc import Callable
from typing import Any, cast
from urllib.parse import unquote

import fsspec
from fsspec.implementations.local import LocalFileSystem

from eventide import types
from eventide.artifacts.base_artifact_service import (
    TOMBSTONE_MIME_TYPE,
    ArtifactVersion,
    BaseArtifactService,
    is_tombstone,
    is_user_scoped,
    new_version_record,
    validate_artifact_name,
    validate_storage_scope,
)
from eventide.artifacts.file_artifact_service import (
    decode_part,
    describe_version,
    encode_part,
    path_segment,
)
from eventide.errors import BackendError, ConfigurationError, CorruptRecordError

__all__ = ["FsspecArtifactService"]

# fsspec has no type information: its entry point, typed as Eventide uses it.
_url_to_fs = cast("Callable[..., tuple[Any, str]]", fsspec.core.url_to_fs)

_MAGIC = b"eventide-artifact 1\n"
_USER_PREFIX = "user:"


class FsspecArtifactService(BaseArtifactService):
    """Stores artifact versions in the fsspec file system named by ``url``.

    Args:
        url: where artifacts live, e.g. ``s3://bucket/artifacts``, ``gs://bucket``,
            ``memory://tests`` or ``file:///var/lib/app/artifacts``.
        **storage_options: passed to the fsspec backend (credentials, endpoint, ...).
    """

    def __init__(self, url: str, **storage_options: Any) -> None:
        try:
            fs, base = _url_to_fs(url, **storage_options)
        except (ImportError, ValueError) as exc:
            raise ConfigurationError(
                f"No fsspec file system for {url!r}: {exc}. Install the backend for its "
                "scheme (s3fs for s3://, gcsfs for gs://, adlfs for az://)."
            ) from exc
        self.url = url
        self._fs: Any = fs
        self._base = base.rstrip("/")
        self._local = isinstance(fs, LocalFileSystem)

    # --- the contract ---
    async def save_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None,
        filename: str,
        artifact: types.Part,
        custom_metadata: dict[str, Any] | None = None,
    ) -> int:
        validate_artifact_name(filename)
        payload, meta = encode_part(types.Part.model_validate(artifact))
        meta.update(new_version_record(custom_metadata))
        meta["size"] = len(payload)
        blob = _MAGIC + json.dumps(meta).encode() + b"\n" + payload
        folder = self._file_folder(app_name, user_id, session_id, filename)
        try:
            return await asyncio.to_thread(self._save_sync, folder, blob)
        except OSError as exc:
            raise BackendError(
                f"Could not save artifact {filename!r} to {self.url!r}: {exc}. Earlier "
                "versions are intact; check the store's permissions and reachability."
            ) from exc

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None,
        filename: str,
        version: int | None = None,
    ) -> types.Part | None:
        folder = self._file_folder(app_name, user_id, session_id, filename)
        return await asyncio.to_thread(self._load_sync, folder, version)

    async def get_artifact_version(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str | None,
        filename: str,
        version: int | None = None,
    ) -> ArtifactVersion | None:
        folder = self._file_folder(app_name, user_id, session_id, filename)
        return await asyncio.to_thread(self._describe_sync, folder, version)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None
    ) -> list[str]:
        validate_storage_scope(app_name, user_id, session_id)
        user_folder = f"{self._base}/{path_segment(app_name)}/{path_segment(user_id)}"
        session_folder = f"{user_folder}/sessions/{path_segment(session_id or '')}"
        return await asyncio.to_thread(self._keys_sync, session_folder, f"{user_folder}/user")

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> None:
        folder = self._file_folder(app_name, user_id, session_id, filename)
        await asyncio.to_thread(self._delete_sync, folder)

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> list[int]:
        folder = self._file_folder(app_name, user_id, session_id, filename)
        return await asyncio.to_thread(self._versions_sync, folder)

    # --- paths ---
    def _file_folder(
        self, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> str:
        validate_storage_scope(app_name, user_id, session_id, filename)
        base = f"{self._base}/{path_segment(app_name)}/{path_segment(user_id)}"
        if is_user_scoped(filename):
            return f"{base}/user/{path_segment(filename[len(_USER_PREFIX) :])}"
        return f"{base}/sessions/{path_segment(session_id or '')}/{path_segment(filename)}"

    # --- blocking work, run in a thread ---
    def _versions_sync(self, folder: str) -> list[int]:
        fs = self._fs
        # Listings may be cached by the backend (s3fs, gcsfs); other processes write too.
        fs.invalidate_cache(folder)
        try:
            paths = fs.ls(folder, detail=False)
        except (FileNotFoundError, NotADirectoryError):
            return []
        names = (posixpath.basename(str(p).rstrip("/")) for p in paths)
        return sorted(int(n) for n in names if n.isdigit() and n.isascii())

    def _save_sync(self, folder: str, blob: bytes) -> int:
        fs = self._fs
        if self._local:
            fs.makedirs(folder, exist_ok=True)
        versions = self._versions_sync(folder)
        version = versions[-1] + 1 if versions else 0
        while True:
            try:
                with fs.open(f"{folder}/{version}", "xb") as f:
                    f.write(blob)
            except FileExistsError:
                version += 1  # claimed by another writer: take the next number
                continue
            return version

    def _read_sync(self, path: str) -> types.Part | None:
        stored = self._read_object_sync(path)
        return None if stored is None else decode_part(stored[1], stored[0], where=path)

    def _describe_sync(self, folder: str, version: int | None) -> ArtifactVersion | None:
        candidates = reversed(self._versions_sync(folder)) if version is None else [version]
        for number in candidates:
            path = f"{folder}/{number}"
            stored = self._read_object_sync(path) if number >= 0 else None
            if stored is None:
                continue  # the newest may still be in flight
            if is_tombstone(decode_part(stored[1], stored[0], where=path)):
                return None
            return describe_version(stored[0], number, self._fs.unstrip_protocol(path))
        return None

    def _read_object_sync(self, path: str) -> tuple[dict[str, Any], bytes] | None:
        """A version object's metadata and payload; None when absent or still in flight."""
        try:
            with self._fs.open(path, "rb") as f:
                data = cast(bytes, f.read())
        except (FileNotFoundError, IsADirectoryError):
            return None
        if not data.startswith(_MAGIC):
            if _MAGIC.startswith(data):
                return None  # still being written (non-atomic file system)
            raise CorruptRecordError(
                f"Object {path!r} in {self.url!r} is not an Eventide artifact (bad header); "
                "it was written by something else. Remove it or store artifacts elsewhere."
            )
        meta_end = data.find(b"\n", len(_MAGIC))
        if meta_end < 0:
            return None  # still being written
        try:
            meta = json.loads(data[len(_MAGIC) : meta_end])
        except ValueError as exc:
            raise CorruptRecordError(
                f"Artifact object {path!r} has unreadable metadata ({exc})."
            ) from exc
        payload = data[meta_end + 1 :]
        if len(payload) < meta.get("size", 0):
            return None  # still being written, or a torn write left by a crash
        return meta, payload

    def _load_sync(self, folder: str, version: int | None) -> types.Part | None:
        part: types.Part | None = None
        if version is not None:
            part = self._read_sync(f"{folder}/{version}") if version >= 0 else None
        else:
            # The newest readable version: a newer one may still be in flight.
            for candidate in reversed(self._versions_sync(folder)):
                part = self._read_sync(f"{folder}/{candidate}")
                if part is not None:
                    break
        return None if part is None or is_tombstone(part) else part

    def _is_tombstone_object(self, path: str) -> bool:
        """Whether a version object holds a tombstone, from its header alone."""
        try:
            with self._fs.open(path, "rb") as f:
                head = cast(bytes, f.read(len(_MAGIC) + 256))
        except (FileNotFoundError, IsADirectoryError):
            return False
        meta_end = head.find(b"\n", len(_MAGIC))
        if not head.startswith(_MAGIC) or meta_end < 0:
            return False  # in flight or foreign: listing keeps it, loading reports it
        try:
            meta = json.loads(head[len(_MAGIC) : meta_end])
        except ValueError:
            return False
        return bool(
            meta.get("kind") == "bytes"
            and meta.get("mime_type") == TOMBSTONE_MIME_TYPE
            and meta.get("size") == 0
        )

    def _names_with_versions(self, scope_folder: str) -> list[str]:
        fs = self._fs
        fs.invalidate_cache(scope_folder)
        try:
            paths = fs.find(scope_folder, maxdepth=2, withdirs=False, detail=False)
        except (FileNotFoundError, NotADirectoryError):
            return []
        prefix = fs._strip_protocol(scope_folder).rstrip("/") + "/"
        latest: dict[str, int] = {}
        for path in paths:
            relative = str(path)[len(prefix) :] if str(path).startswith(prefix) else ""
            name, _, version = relative.partition("/")
            if name and version.isdigit() and version.isascii():
                latest[name] = max(latest.get(name, -1), int(version))
        # A file whose newest version is a tombstone is absent.
        return sorted(
            name
            for name, version in latest.items()
            if not self._is_tombstone_object(f"{scope_folder}/{name}/{version}")
        )

    def _keys_sync(self, session_folder: str, user_folder: str) -> list[str]:
        keys = [unquote(n) for n in self._names_with_versions(session_folder)]
        keys += [_USER_PREFIX + unquote(n) for n in self._names_with_versions(user_folder)]
        return sorted(keys)

    def _delete_sync(self, folder: str) -> None:
        fs = self._fs
        fs.invalidate_cache(folder)
        try:
            fs.rm(folder, recursive=True)
        except FileNotFoundError:
            pass  # deleting a missing file is not an error
