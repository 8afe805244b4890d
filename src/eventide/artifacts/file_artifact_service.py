"""``FileArtifactService``: artifact versions as files in a local folder.

Layout under ``root``::

    <app>/<user>/user/<file>/<version>/{payload, meta.json}              user: names
    <app>/<user>/sessions/<session>/<file>/<version>/{payload, meta.json}  session names
    .tmp/<random>/                                                        saves in progress

Every path segment is percent-encoded (a file name with ``/`` is one folder, never a
subfolder, and no segment starts with ``.``), so no name can reach outside ``root``; names
are also checked with :func:`validate_artifact_name` before anything is written, and app,
user and session ids with :func:`validate_storage_scope` on every call (google-adk's rule: no
empty id, no ``.`` or ``..``, no ``/``, ``\\`` or NUL).

A save writes ``payload`` and ``meta.json`` into a fresh folder under ``.tmp``, fsyncs both
files and the folder, then renames the folder to the next version number and fsyncs the
parent. ``rename`` of a folder onto an existing, non-empty version folder fails, so two
processes saving the same file at once never claim the same number: the loser retries with
the next one. A crash leaves at most a folder under ``.tmp``, which is never listed as a
version. Deleting a file renames its folder away first, so readers never see it half-deleted.
"""

from __future__ import annotations

import asyncio
import errno
import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

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
from eventide.errors import (
    BackendError,
    CorruptRecordError,
    InvalidArtifactNameError,
    UsageError,
)

__all__ = ["FileArtifactService"]

_PAYLOAD = "payload"
_META = "meta.json"
_TMP = ".tmp"
_USER_PREFIX = "user:"


class FileArtifactService(BaseArtifactService):
    """Stores artifact versions as files under ``root`` (created if missing).

    Safe for several processes sharing one local folder (see the module docstring for how
    versions are claimed). Network file systems that do not make ``rename`` atomic (some
    SMB/NFS setups) weaken that guarantee. File IO runs in worker threads, off the event loop.

    Args:
        root: the folder that holds every app's artifacts (``root_dir=`` is the same
            argument under google-adk's name).
    """

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        *,
        root_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if (root is None) == (root_dir is None):
            raise UsageError(
                "FileArtifactService needs the folder to store artifacts in: pass it once, "
                "as FileArtifactService('path') or FileArtifactService(root_dir='path')."
            )
        folder = root if root is not None else root_dir
        assert folder is not None
        self.root = Path(folder).absolute()
        if self.root.exists() and not self.root.is_dir():
            raise BackendError(
                f"FileArtifactService root {str(self.root)!r} exists and is not a folder; "
                "pass the path of a folder (it is created when missing)."
            )

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
        folder = self._file_folder(app_name, user_id, session_id, filename)
        try:
            return await asyncio.to_thread(self._save_sync, folder, payload, meta)
        except OSError as exc:
            if exc.errno == errno.ENAMETOOLONG:
                raise InvalidArtifactNameError(
                    filename, "it is too long for the file system once encoded"
                ) from exc
            raise BackendError(
                f"Could not save artifact {filename!r} under {str(self.root)!r}: {exc}. Check "
                "that the folder is writable and the disk is not full; earlier versions are "
                "intact."
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
        return await asyncio.to_thread(_describe_version, folder, version)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str | None
    ) -> list[str]:
        validate_storage_scope(app_name, user_id, session_id)
        user_folder = self.root / path_segment(app_name) / path_segment(user_id)
        session_folder = user_folder / "sessions" / path_segment(session_id or "")
        return await asyncio.to_thread(self._keys_sync, session_folder, user_folder / "user")

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> None:
        folder = self._file_folder(app_name, user_id, session_id, filename)
        await asyncio.to_thread(self._delete_sync, folder)

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> list[int]:
        folder = self._file_folder(app_name, user_id, session_id, filename)
        return await asyncio.to_thread(_versions, folder)

    # --- paths ---
    def _file_folder(
        self, app_name: str, user_id: str, session_id: str | None, filename: str
    ) -> Path:
        validate_storage_scope(app_name, user_id, session_id, filename)
        base = self.root / path_segment(app_name) / path_segment(user_id)
        if is_user_scoped(filename):
            return base / "user" / path_segment(filename[len(_USER_PREFIX) :])
        return base / "sessions" / path_segment(session_id or "") / path_segment(filename)

    # --- blocking work, run in a thread ---
    def _save_sync(self, folder: Path, payload: bytes, meta: dict[str, Any]) -> int:
        staging = self.root / _TMP / uuid.uuid4().hex
        staging.mkdir(parents=True)
        try:
            _write_durably(staging / _PAYLOAD, payload)
            _write_durably(staging / _META, json.dumps(meta).encode())
            _fsync_dir(staging)
            _make_dirs_durably(folder)
            version = _next_version(folder)
            while True:
                try:
                    os.rename(staging, folder / str(version))
                except FileNotFoundError:
                    # The file was deleted meanwhile (its folder renamed away): recreate it.
                    _make_dirs_durably(folder)
                    version = _next_version(folder)
                    continue
                except OSError as exc:
                    if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                        raise
                    # Another writer claimed this number first; take the next free one.
                    version = max(version + 1, _next_version(folder))
                    continue
                break
            _fsync_dir(folder)
            return version
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)

    def _load_sync(self, folder: Path, version: int | None) -> types.Part | None:
        part: types.Part | None = None
        if version is not None:
            part = _read_version(folder / str(version)) if version >= 0 else None
        else:
            # Newest first, without a stat per version: the first complete one is the latest.
            for candidate in sorted(_numbered(folder), reverse=True):
                part = _read_version(folder / str(candidate))
                if part is not None:
                    break
        return None if part is None or is_tombstone(part) else part

    def _keys_sync(self, session_folder: Path, user_folder: Path) -> list[str]:
        keys = [unquote(name) for name in _file_names(session_folder)]
        keys += [_USER_PREFIX + unquote(name) for name in _file_names(user_folder)]
        return sorted(keys)

    def _delete_sync(self, folder: Path) -> None:
        if not folder.is_dir():
            return
        trash = self.root / _TMP / f"deleted-{uuid.uuid4().hex}"
        trash.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.rename(folder, trash)
        except FileNotFoundError:
            return  # deleted concurrently
        _fsync_dir(folder.parent)
        shutil.rmtree(trash, ignore_errors=True)


# --- encoding of parts, shared with the fsspec service ---
def encode_part(part: types.Part) -> tuple[bytes, dict[str, Any]]:
    """The bytes to store for ``part`` and the metadata needed to rebuild it exactly.

    A plain text part is stored as UTF-8 text, a plain inline-data part as its raw bytes
    (so the stored file is the artifact itself); anything else as the part's JSON.
    """
    fields = part.model_dump(exclude_none=True)
    if fields.keys() == {"text"} and part.text is not None:
        return part.text.encode("utf-8"), {"kind": "text", "mime_type": "text/plain"}
    blob = part.inline_data
    if fields.keys() == {"inline_data"} and blob is not None and blob.data is not None:
        meta: dict[str, Any] = {"kind": "bytes", "mime_type": blob.mime_type}
        if blob.display_name is not None:
            meta["display_name"] = blob.display_name
        return blob.data, meta
    return part.model_dump_json(exclude_none=True).encode("utf-8"), {
        "kind": "part",
        "mime_type": "application/json",
    }


def decode_part(payload: bytes, meta: dict[str, Any], *, where: str) -> types.Part:
    """Rebuild the part that :func:`encode_part` stored.

    Raises:
        CorruptRecordError: the metadata or payload does not describe a part.
    """
    kind = meta.get("kind")
    try:
        if kind == "text":
            return types.Part(text=payload.decode("utf-8"))
        if kind == "bytes":
            return types.Part(
                inline_data=types.Blob(
                    data=payload,
                    mime_type=meta.get("mime_type"),
                    display_name=meta.get("display_name"),
                )
            )
        if kind == "part":
            return types.Part.model_validate_json(payload)
    except ValueError as exc:
        raise CorruptRecordError(
            f"Artifact {where!r} could not be read back as a {kind} part ({exc}); it was "
            "edited or damaged outside Eventide."
        ) from exc
    raise CorruptRecordError(
        f"Artifact {where!r} has unknown kind {kind!r} in its metadata; it was written by a "
        "newer Eventide or edited by hand."
    )


# --- helpers ---
def path_segment(value: str) -> str:
    """``value`` as one safe path segment: percent-encoded, never empty, never starting
    with '.' (which keeps '.', '..' and our own '.tmp' out of reach)."""
    encoded = quote(value, safe="")
    if not encoded:
        return "%"  # quote() never yields a bare '%', so this cannot collide
    if encoded.startswith("."):
        encoded = "%2E" + encoded[1:]
    return encoded


def _numbered(folder: Path) -> list[int]:
    """Every digit-named entry of ``folder`` (committed or not)."""
    try:
        names = os.listdir(folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [int(n) for n in names if n.isdigit() and n.isascii()]


def _read_version(target: Path) -> types.Part | None:
    """The part stored in one version folder, or None when it is not a committed version."""
    meta = _read_meta(target)
    try:
        payload = (target / _PAYLOAD).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return None if meta is None else decode_part(payload, meta, where=str(target))


def _read_meta(target: Path) -> dict[str, Any] | None:
    """A version folder's metadata, or None when it is not there (not committed, or deleted
    meanwhile)."""
    try:
        meta_bytes = (target / _META).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        meta: dict[str, Any] = json.loads(meta_bytes)
    except ValueError as exc:
        raise CorruptRecordError(
            f"Artifact metadata {str(target / _META)!r} is not valid JSON ({exc}); it was "
            "edited or damaged outside Eventide. Delete that version folder or restore it."
        ) from exc
    return meta


def _versions(folder: Path) -> list[int]:
    """The committed versions in ``folder``: digit-named subfolders holding their metadata."""
    return sorted(n for n in _numbered(folder) if (folder / str(n) / _META).is_file())


def _next_version(folder: Path) -> int:
    """One past the highest digit-named entry (even one without metadata, left by a hand
    edit, so a save never tries to claim a name that is taken)."""
    return max(_numbered(folder), default=-1) + 1


def _file_names(scope_folder: Path) -> list[str]:
    """The files in a scope folder that have a committed version, the newest of which is
    not a tombstone."""
    try:
        names = os.listdir(scope_folder)
    except (FileNotFoundError, NotADirectoryError):
        return []
    present: list[str] = []
    for name in names:
        if name.startswith("."):
            continue
        versions = _versions(scope_folder / name)
        if versions and not _is_tombstone_version(scope_folder / name / str(versions[-1])):
            present.append(name)
    return present


def describe_version(meta: dict[str, Any], version: int, uri: str) -> ArtifactVersion:
    """A version's description from the metadata :func:`encode_part` and the save wrote."""
    return ArtifactVersion(
        version=version,
        canonical_uri=uri,
        custom_metadata=dict(meta.get("custom_metadata") or {}),
        create_time=meta.get("create_time"),
        mime_type=meta.get("mime_type") if meta.get("kind") == "bytes" else None,
    )


def _describe_version(folder: Path, version: int | None) -> ArtifactVersion | None:
    committed = _versions(folder)
    number = (committed[-1] if committed else None) if version is None else version
    if number is None or number not in committed:
        return None
    target = folder / str(number)
    meta = None if _is_tombstone_version(target) else _read_meta(target)
    return None if meta is None else describe_version(meta, number, (target / _PAYLOAD).as_uri())


def _is_tombstone_version(target: Path) -> bool:
    """Whether a committed version folder holds a tombstone, from its metadata and payload
    size (without reading the payload)."""
    try:
        meta = json.loads((target / _META).read_bytes())
        empty = (target / _PAYLOAD).stat().st_size == 0
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return False  # deleted meanwhile, or damaged: loading it reports that
    return empty and meta.get("kind") == "bytes" and meta.get("mime_type") == TOMBSTONE_MIME_TYPE


def _write_durably(path: Path, data: bytes) -> None:
    with open(path, "xb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # e.g. Windows cannot open folders; rename is still atomic there
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on folders; nothing more we can do
    finally:
        os.close(fd)


def _make_dirs_durably(folder: Path) -> None:
    """Create ``folder`` and its missing parents, fsyncing each new entry's parent."""
    missing: list[Path] = []
    current = folder
    while not current.exists():
        missing.append(current)
        current = current.parent
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            continue  # another writer created it
        _fsync_dir(path.parent)
