"""Where an app's eval sets and eval results live.

:class:`FolderEvalStore` keeps them in the app's folder, where google-adk keeps them too:
eval sets as ``<app folder>/<eval_set_id>.evalset.json`` (snake_case JSON, the files
``adk eval`` reads) and results as
``<app folder>/.eventide/eval_history/<result_id>.evalset_result.json``. Files are replaced
atomically (written beside, then renamed), so a crash never leaves half a file.
:class:`InMemoryEvalStore` serves apps that have no folder (given to the server as objects).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
from abc import ABC, abstractmethod
from pathlib import Path

from pydantic import ValidationError

from eventide.errors import (
    EvalSetExistsError,
    InvalidEvalFileError,
    UnknownEvalResultError,
    UnknownEvalSetError,
)
from eventide.evaluation.eval_set import EvalSet, EvalSetResult

__all__ = [
    "EVAL_SET_SUFFIX",
    "EvalSetExistsError",
    "EvalStore",
    "FolderEvalStore",
    "InMemoryEvalStore",
    "InvalidEvalFileError",
    "UnknownEvalResultError",
    "UnknownEvalSetError",
    "load_eval_set_file",
]

EVAL_SET_SUFFIX = ".evalset.json"
_RESULT_SUFFIX = ".evalset_result.json"
_RESULT_ID = re.compile(r"^[A-Za-z0-9_.\-]+$")


def load_eval_set_file(path: Path) -> EvalSet:
    """Read and validate an ``*.evalset.json`` file (snake_case or camelCase keys).

    Raises:
        OSError: the file cannot be read.
        InvalidEvalFileError: it is not JSON, or not an eval set.
    """
    from eventide.evaluation.eval_set import from_either_case

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise InvalidEvalFileError(f"{path} is not valid JSON: {exc}") from exc
    try:
        return EvalSet.model_validate(from_either_case(data))
    except ValidationError as exc:
        raise InvalidEvalFileError(f"{path} is not a valid eval set: {exc}") from exc


class EvalStore(ABC):
    """An app's eval sets and eval results."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()

    @abstractmethod
    def list_eval_sets(self) -> list[str]:
        """The ids of the eval sets, sorted."""

    @abstractmethod
    def get_eval_set(self, eval_set_id: str) -> EvalSet:
        """The eval set ``eval_set_id``.

        Raises:
            UnknownEvalSetError: there is none.
            InvalidEvalFileError: its stored file is not a valid eval set.
        """

    @abstractmethod
    def _write_eval_set(self, eval_set: EvalSet) -> None: ...

    @abstractmethod
    def list_results(self) -> list[str]:
        """The ids of the stored eval results, oldest first."""

    @abstractmethod
    def get_result(self, result_id: str) -> EvalSetResult:
        """The stored result ``result_id``.

        Raises:
            UnknownEvalResultError: there is none.
        """

    @abstractmethod
    def save_result(self, result: EvalSetResult) -> None:
        """Store a run's result under its ``eval_set_result_id``."""

    async def create_eval_set(self, eval_set: EvalSet) -> EvalSet:
        """Store a new eval set.

        Raises:
            EvalSetExistsError: one by that id exists already.
        """
        async with self._lock:
            if eval_set.eval_set_id in self.list_eval_sets():
                raise EvalSetExistsError(
                    f"eval set {eval_set.eval_set_id!r} already exists; pick another id or "
                    "update its cases"
                )
            self._write_eval_set(eval_set)
        return eval_set

    async def replace_eval_set(self, eval_set: EvalSet) -> None:
        """Store ``eval_set`` over the existing one of the same id."""
        async with self._lock:
            self._write_eval_set(eval_set)


class FolderEvalStore(EvalStore):
    """Eval sets and results as files in an app's folder (google-adk's layout)."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder
        self.history = folder / ".eventide" / "eval_history"

    def _set_path(self, eval_set_id: str) -> Path:
        return self.folder / f"{eval_set_id}{EVAL_SET_SUFFIX}"

    def list_eval_sets(self) -> list[str]:
        return sorted(
            p.name[: -len(EVAL_SET_SUFFIX)] for p in self.folder.glob(f"*{EVAL_SET_SUFFIX}")
        )

    def get_eval_set(self, eval_set_id: str) -> EvalSet:
        path = self._set_path(eval_set_id)
        if eval_set_id not in self.list_eval_sets():
            raise UnknownEvalSetError(eval_set_id)
        return load_eval_set_file(path)

    def _write_eval_set(self, eval_set: EvalSet) -> None:
        _write_atomic(
            self._set_path(eval_set.eval_set_id),
            eval_set.model_dump_json(indent=2, exclude_none=True),
        )

    def list_results(self) -> list[str]:
        paths = sorted(self.history.glob(f"*{_RESULT_SUFFIX}"), key=lambda p: p.stat().st_mtime)
        return [p.name[: -len(_RESULT_SUFFIX)] for p in paths]

    def get_result(self, result_id: str) -> EvalSetResult:
        if not _RESULT_ID.match(result_id) or ".." in result_id:
            raise UnknownEvalResultError(result_id)
        path = self.history / f"{result_id}{_RESULT_SUFFIX}"
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as exc:
            raise UnknownEvalResultError(result_id) from exc
        try:
            return EvalSetResult.model_validate_json(text)
        except ValidationError as exc:
            raise InvalidEvalFileError(f"{path} is not a valid eval result: {exc}") from exc

    def save_result(self, result: EvalSetResult) -> None:
        self.history.mkdir(parents=True, exist_ok=True)
        _write_atomic(
            self.history / f"{result.eval_set_result_id}{_RESULT_SUFFIX}",
            result.model_dump_json(indent=2, exclude_none=True),
        )


class InMemoryEvalStore(EvalStore):
    """Eval sets and results kept in memory, for apps that have no folder."""

    def __init__(self) -> None:
        super().__init__()
        self._sets: dict[str, str] = {}
        self._results: dict[str, str] = {}

    def list_eval_sets(self) -> list[str]:
        return sorted(self._sets)

    def get_eval_set(self, eval_set_id: str) -> EvalSet:
        try:
            return EvalSet.model_validate_json(self._sets[eval_set_id])
        except KeyError as exc:
            raise UnknownEvalSetError(eval_set_id) from exc

    def _write_eval_set(self, eval_set: EvalSet) -> None:
        # Stored as JSON so that callers never share (and mutate) a stored object.
        self._sets[eval_set.eval_set_id] = eval_set.model_dump_json(exclude_none=True)

    def list_results(self) -> list[str]:
        return list(self._results)

    def get_result(self, result_id: str) -> EvalSetResult:
        try:
            return EvalSetResult.model_validate_json(self._results[result_id])
        except KeyError as exc:
            raise UnknownEvalResultError(result_id) from exc

    def save_result(self, result: EvalSetResult) -> None:
        self._results[result.eval_set_result_id] = result.model_dump_json(exclude_none=True)


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
