"""What each google-adk unit test touches, read from its source (no import, no run).

For one test, the closure of what it reads is: its own body, the fixtures it asks for and the
autouse ones (from its file, its class and the ``conftest.py`` files above it), the module
level functions, classes and assignments of its file those mention, transitively, and for a
method the class's other members it reads through ``self``. From that closure a test is:

- ``live``: it uses live (bidirectional audio/video) streaming: ``LiveRequestQueue``,
  ``run_live``, an LLM connection, or it lives in a file about audio, transcription or the
  live API. Eventide does not support live streaming.
- ``cloud``: it needs a Google Cloud service or SDK (Vertex AI, BigQuery, Spanner, ...).
- ``internals``: it imports a google-adk internal module (``import_map.is_internal_module``),
  patches a google-adk module or class (``mock.patch('google.adk...')``,
  ``mock.patch.object(AdkName, ...)``, ``mocker.patch``, ``monkeypatch.setattr``), or reads
  a private attribute of an object (``obj._name``, other than google-adk's documented
  override hooks such as ``_run_async_impl`` and ``_get_declaration``).
- ``absent``: it uses only public API, but of a google-adk module that has no Eventide
  counterpart at all (``import_map.has_counterpart``): a feature Eventide does not have.
- ``public``: none of these.

The first that applies, in this order, is the test's kind.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterable, Iterator
from pathlib import Path

from adk_unittests.import_map import has_counterpart, is_internal_module

CLOUD_WORDS = (
    "vertex",
    "bigquery",
    "bigtable",
    "spanner",
    "pubsub",
    "apihub",
    "application_integration",
    "google_api_tool",
    "discovery_engine",
    "enterprise_search",
    "enterprise_web_search",
    "gcs_artifact",
    "secret_manager",
    "data_agent",
    "google_credentials",
    "integrations",
    "google_maps_grounding",
    "agent_engine",
)
CLOUD_MODULES = ("google.cloud", "vertexai", "googleapiclient", "google.auth", "google.api_core")
LIVE_NAMES = frozenset(
    {"LiveRequestQueue", "run_live", "BaseLlmConnection", "LiveRequest", "_run_live"}
)
LIVE_WORDS = ("live", "audio", "transcription", "realtime")
# google-adk's documented extension hooks: private by name, public by use (custom agents
# and tools override them, and tests call them).
OVERRIDE_HOOKS = frozenset({"_run_async_impl", "_run_live_impl", "_get_declaration"})
PATCH_CALLS = frozenset({"patch", "object", "setattr", "patch_object", "dict", "multiple"})


@dataclasses.dataclass(frozen=True, slots=True)
class TestReading:
    """One test's kind and the evidence for it."""

    kind: str
    evidence: str


@dataclasses.dataclass(slots=True)
class _Source:
    imports: dict[str, str]  # local name -> google.adk / cloud module (or module.name)
    defs: dict[str, ast.AST]  # module-level functions, classes, assignments by name
    fixtures: dict[str, ast.AST]
    autouse: list[ast.AST]


def _is_fixture(node: ast.AST) -> tuple[bool, bool]:
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return False, False
    for decorator in node.decorator_list:
        text = ast.unparse(decorator)
        if "fixture" in text:
            return True, "autouse=True" in text.replace(" ", "")
    return False, False


def _read_source(path: Path) -> _Source:
    tree = ast.parse(path.read_text(), filename=str(path))
    source = _Source(imports={}, defs={}, fixtures={}, autouse=[])
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                source.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                source.imports[alias.asname or alias.name.split(".")[0]] = alias.name
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            source.defs[node.name] = node
            fixture, autouse = _is_fixture(node)
            if fixture:
                source.fixtures[node.name] = node
                if autouse:
                    source.autouse.append(node)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        source.defs[name.id] = node
    return source


def _conftests(test_file: Path, kit_tests: Path) -> list[Path]:
    found: list[Path] = []
    folder = test_file.parent
    while True:
        candidate = folder / "conftest.py"
        if candidate.is_file():
            found.append(candidate)
        if folder == kit_tests or kit_tests not in folder.parents:
            return found
        folder = folder.parent


def _module_of(imported: str) -> str:
    """``google.adk.x.y.Name`` -> the module part as far as it can be told: a capitalised or
    snake-case last part is taken for a name when its parent is a module path."""
    return imported.rpartition(".")[0] if "." in imported else imported


def _touches(nodes: Iterable[ast.AST]) -> Iterator[tuple[str, str]]:
    """(kind of token, token): names read, attributes read, strings, patch targets."""
    for root in nodes:
        for node in ast.walk(root):
            if isinstance(node, ast.Name):
                yield "name", node.id
            elif isinstance(node, ast.Attribute):
                yield "attr", node.attr
                owner = node.value
                if (
                    node.attr.startswith("_")
                    and not node.attr.endswith("__")
                    and not (isinstance(owner, ast.Name) and owner.id in ("self", "cls"))
                ):
                    yield "private", node.attr
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield "str", node.value
            elif isinstance(node, ast.arg):
                yield "arg", node.arg
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name):
                func = ast.unparse(node.func)
                last = func.rpartition(".")[2]
                if last in PATCH_CALLS and ("patch" in func or "monkeypatch" in func) and node.args:
                    yield "patch", ast.unparse(node.args[0])


class KitReader:
    """Reads the tests of one google-adk unit-test kit (caching each file it parses)."""

    def __init__(self, kit_root: Path, *, eventide_src: Path, adk_root: Path | None = None) -> None:
        self.kit_root = kit_root
        self.eventide_src = eventide_src
        self.adk_root = adk_root
        self.kit_tests = kit_root / "tests" / "unittests"
        self._sources: dict[Path, _Source] = {}

    def _source(self, path: Path) -> _Source:
        if path not in self._sources:
            self._sources[path] = _read_source(path)
        return self._sources[path]

    def read(self, nodeid: str) -> TestReading:
        """The kind of the test ``nodeid`` (pytest's id, relative to the kit's root)."""
        file_part, _, rest = nodeid.partition("::")
        path = self.kit_root / file_part
        names = [part.partition("[")[0] for part in rest.split("::")]
        return self._classify(path, names)

    def _classify(self, path: Path, names: list[str]) -> TestReading:
        relative = path.relative_to(self.kit_tests).as_posix()
        lowered = relative.lower()
        if any(word in lowered for word in LIVE_WORDS):
            return TestReading("live", f"file {relative}")
        if any(word in lowered for word in CLOUD_WORDS):
            return TestReading("cloud", f"file {relative}")
        own = self._source(path)
        sources = [own] + [self._source(conftest) for conftest in _conftests(path, self.kit_tests)]
        closure = self._closure(own, sources, names)
        imports: dict[str, str] = {}
        for source in reversed(sources):
            imports.update(source.imports)
        reading = _kind(closure, imports)
        if reading.kind == "public":
            absent = self._absent_module(closure, imports)
            if absent:
                return TestReading("absent", f"uses {absent}, which Eventide does not have")
        return reading

    def _absent_module(self, closure: list[ast.AST], imports: dict[str, str]) -> str | None:
        names = {token for kind, token in _touches(closure) if kind == "name"}
        for name in sorted(names & set(imports)):
            imported = imports[name]
            if not imported.startswith("google.adk."):
                continue
            module = imported if self._is_adk_module(imported) else _module_of(imported)
            if module != "google.adk" and not has_counterpart(module, self.eventide_src):
                return module
        return None

    def _is_adk_module(self, name: str) -> bool:
        if self.adk_root is None:
            last = name.rpartition(".")[2]
            return last.islower()
        path = Path(self.adk_root, *name.split(".")[2:])
        return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()

    def _closure(self, own: _Source, sources: list[_Source], names: list[str]) -> list[ast.AST]:
        fixtures: dict[str, ast.AST] = {}
        autouse: list[ast.AST] = []
        for source in reversed(sources):
            fixtures.update(source.fixtures)
            autouse.extend(source.autouse)
        start: list[ast.AST] = []
        scope = own.defs
        members: dict[str, ast.AST] = {}
        node = scope.get(names[0]) if names else None
        for name in names[1:]:
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        members[item.name] = item
                        fixture, auto = _is_fixture(item)
                        if fixture:
                            fixtures[item.name] = item
                            if auto or item.name in ("setUp", "setup_method", "asyncSetUp"):
                                autouse.append(item)
                        elif item.name in ("setUp", "setup_method", "asyncSetUp", "setup_class"):
                            autouse.append(item)
                node = members.get(name)
        if node is not None:
            start.append(node)
        start.extend(autouse)
        seen: set[int] = set()
        closure: list[ast.AST] = []
        pending = list(start)
        while pending:
            current = pending.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            closure.append(current)
            for kind, token in _touches([current]):
                if kind == "name" and token in own.defs:
                    pending.append(own.defs[token])
                if kind in ("name", "arg") and token in fixtures:
                    pending.append(fixtures[token])
                if kind == "attr" and token in members:
                    pending.append(members[token])
        return closure


def _kind(closure: list[ast.AST], imports: dict[str, str]) -> TestReading:
    touched = list(_touches(closure))
    names = {token for kind, token in touched if kind == "name"}
    attrs = {token for kind, token in touched if kind == "attr"}
    for token in sorted((names | attrs) & LIVE_NAMES):
        return TestReading("live", f"uses {token}")
    used_imports = {name: imports[name] for name in names if name in imports}
    for imported in sorted(used_imports.values()):
        lowered = imported.lower()
        if imported.startswith(CLOUD_MODULES) or (
            imported.startswith("google.adk") and any(word in lowered for word in CLOUD_WORDS)
        ):
            return TestReading("cloud", f"uses {imported}")
        if imported.startswith("google.adk") and any(w in lowered for w in LIVE_WORDS):
            return TestReading("live", f"uses {imported}")
    for imported in sorted(used_imports.values()):
        if imported.startswith("google.adk") and (
            is_internal_module(_module_of(imported)) or is_internal_module(imported)
        ):
            return TestReading("internals", f"imports {imported}")
    for kind, token in touched:
        if kind == "private" and token not in OVERRIDE_HOOKS:
            return TestReading("internals", f"reads private attribute {token}")
        if kind != "patch":
            continue
        target = token.strip("'\"")
        root = target.split(".")[0]
        if target.startswith("google.adk") or imports.get(root, "").startswith("google.adk"):
            return TestReading("internals", f"patches {target}")
    return TestReading("public", "")
