"""``eventide migrate``: rewrite a google-adk project's imports to Eventide.

The codemod works on the concrete syntax tree (libcst), so formatting and comments stay as
they were. For each Python file it:

- rewrites ``from google.adk... import Name`` to ``from eventide import Name`` when Eventide
  has ``Name`` (under the same name, or a renamed one imported ``as`` the old name, so the
  rest of the file is unchanged);
- rewrites ``from google.genai import types`` (and ``from google.genai.types import ...``)
  to Eventide's ``types`` when every ``types.X`` the file uses exists there; otherwise it
  keeps google-genai (Eventide accepts its objects) and says which names kept it;
- rewrites module imports (``from google.adk.agents import llm_agent``, ``import
  google.adk.runners as r``), dotted uses (``google.adk.runners.Runner``), the workflow
  (``google.adk.workflow`` is ``eventide.workflow``) and google-adk 2.x's top-level names
  (``from google.adk import Agent, Event, Workflow, Context``): see ``migrate_modules``;
- reports every use it cannot map (a name Eventide lacks, a module whose names Eventide
  lacks, a dotted reference to one), with the reason and, where there is one, what to use
  instead.

``--check`` changes nothing and exits 1 when a file would change (for CI).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from eventide.cli.migrate_modules import (
    TOP_LEVEL_2X,
    WORKFLOW_MODULE,
    WORKFLOW_NAMES,
    WORKFLOW_NAMES_ELSEWHERE,
    ModuleTarget,
    ModuleUses,
    dotted_target,
    has_same_path_module,
    module_target,
)

__all__ = ["Change", "FileReport", "Unmapped", "migrate_path", "migrate_source"]

# google-adk names Eventide spells differently: imported `as` the ADK name.
RENAMED: dict[str, str] = {
    "MCPToolset": "McpToolset",
    "LlmRegistry": "LLMRegistry",
}

# google-adk names Eventide does not have, and what to do instead.
UNSUPPORTED: dict[str, str] = {
    "transfer_to_agent": "Eventide offers transfer_to_agent by itself to every agent that has "
    "another agent to transfer to; remove it from the agent's tools",
    "VertexAiSessionService": "needs Vertex AI Agent Engine (a Google Cloud service); use "
    "SqlSessionService (SQLite or PostgreSQL) instead",
    "VertexAiMemoryBankService": "needs Vertex AI Memory Bank (a Google Cloud service); use "
    "SqlMemoryService or InMemoryMemoryService instead",
    "VertexAiRagMemoryService": "needs Vertex AI RAG Engine (a Google Cloud service); use "
    "SqlMemoryService or InMemoryMemoryService instead",
    "VertexAiRagRetrieval": "needs Vertex AI RAG Engine (a Google Cloud service); give the "
    "agent a FunctionTool over your own index instead",
    "GcsArtifactService": "use FsspecArtifactService('gs://bucket/prefix') (the files extra "
    "with gcsfs) instead",
    "AgentEvaluator": "google-adk's evaluation harness is not part of Eventide's API",
    "VertexAiCodeExecutor": "needs Vertex AI Code Interpreter (a Google Cloud service); use "
    "BuiltInCodeExecutor on a Gemini model instead",
    "UnsafeLocalCodeExecutor": "Eventide does not run model-written code locally; use "
    "BuiltInCodeExecutor on a Gemini model instead",
    "LiveRequestQueue": "live (bidirectional audio/video) streaming is not supported",
}

_ADK = "google.adk"
_GENAI_TYPES = "google.genai.types"


@dataclasses.dataclass(frozen=True, slots=True)
class Change:
    """One rewrite: ``line`` in the original file, the old and the new code."""

    line: int
    old: str
    new: str


@dataclasses.dataclass(frozen=True, slots=True)
class Unmapped:
    """A use the codemod could not map: where, what, and why."""

    line: int
    code: str
    reason: str


@dataclasses.dataclass(slots=True)
class FileReport:
    """What migrating one file changed and could not change."""

    path: Path
    changes: list[Change] = dataclasses.field(default_factory=list)
    unmapped: list[Unmapped] = dataclasses.field(default_factory=list)
    new_source: str | None = None
    error: str | None = None


def _eventide_names() -> tuple[frozenset[str], frozenset[str]]:
    import eventide
    from eventide import types

    return frozenset(eventide.__all__) | TOP_LEVEL_2X, frozenset(types.__all__)


def _dotted(node: cst.BaseExpression | None) -> str:
    if node is None:
        return ""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return ""


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node).strip()


class _TypesUses(cst.CSTVisitor):
    """Collects ``alias.X`` attribute reads for the given module aliases."""

    def __init__(self, aliases: set[str]) -> None:
        self.aliases = aliases
        self.used: dict[str, set[str]] = {alias: set() for alias in aliases}

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if isinstance(node.value, cst.Name) and node.value.value in self.aliases:
            self.used[node.value.value].add(node.attr.value)


class _Migrator(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, report: FileReport, types_ok: dict[str, bool], uses: ModuleUses) -> None:
        super().__init__()
        self.report = report
        self.types_ok = types_ok  # genai types alias -> whether Eventide's types suffice
        self.eventide_names, self.types_names = _eventide_names()
        self.module_aliases = uses.module_aliases()  # local module name -> attributes read
        self.dotted_targets = {
            chain: dotted_target(chain, self.eventide_names, RENAMED) for chain in uses.dotted_uses
        }
        self.attribute_renames: dict[str, dict[str, str]] = {}  # local -> {adk: eventide}
        self.eventide_imported = False

    def _module(
        self, node: cst.CSTNode, adk_module: str, local: str, code: str
    ) -> cst.BaseSmallStatement | None:
        """The Eventide import for a google-adk module bound to ``local``, or None (reported)
        when the file reads names from it that Eventide lacks."""
        attrs = self.module_aliases.get(local)
        if attrs is None:
            self._unmapped(node, code, f"{local!r} is used as a value, not only as a module")
            return None
        target = module_target(adk_module, local, attrs, self.eventide_names, RENAMED)
        if not isinstance(target, ModuleTarget):
            self._unmapped(
                node,
                code,
                f"Eventide has no {', '.join(target)} (used as {local}.<name>): import what "
                "Eventide has from eventide and replace the rest",
            )
            return None
        if target.renames:
            self.attribute_renames[local] = target.renames
        statement = cst.parse_statement(target.statement)
        assert isinstance(statement, cst.SimpleStatementLine)
        return statement.body[0]

    def _line(self, node: cst.CSTNode) -> int:
        # libcst's get_metadata result includes its untyped "no default" sentinel for pyright;
        # PositionProvider always yields a CodeRange for a node of the visited tree.
        position = self.get_metadata(PositionProvider, node)
        if not isinstance(position, CodeRange):
            raise TypeError(f"libcst gave no source position for {_code(node)!r}")
        return position.start.line

    def _unmapped(self, node: cst.CSTNode, code: str, reason: str) -> None:
        self.report.unmapped.append(Unmapped(self._line(node), code, reason))

    # --- import google.adk... / import google.genai... ---
    def leave_Import(
        self, original_node: cst.Import, updated_node: cst.Import
    ) -> cst.BaseSmallStatement | cst.FlattenSentinel[cst.BaseSmallStatement] | cst.RemovalSentinel:
        adk = [
            a for a in original_node.names if _dotted(a.name).split(".")[:2] == ["google", "adk"]
        ]
        if not adk:
            return updated_node
        if len(adk) != len(original_node.names):
            self._unmapped(
                original_node,
                _code(original_node),
                "google-adk and other modules in one import: put google-adk's on its own line",
            )
            return updated_node
        statements: list[cst.BaseSmallStatement] = []
        for alias in adk:
            module = _dotted(alias.name)
            if alias.asname is not None:
                local = alias.evaluated_alias or module
                mapped = self._module(original_node, module, local, _code(original_node))
                if mapped is None:
                    return updated_node
                statements.append(mapped)
                continue
            if not self.eventide_imported and any(self.dotted_targets.values()):
                self.eventide_imported = True
                statements.append(cst.Import(names=[cst.ImportAlias(name=cst.Name("eventide"))]))
                targets = [t for t in self.dotted_targets.values() if t]
                if any(t.startswith("eventide.workflow.") for t in targets):
                    workflow = cst.parse_statement("import eventide.workflow")
                    assert isinstance(workflow, cst.SimpleStatementLine)
                    statements.append(workflow.body[0])
            missing = sorted(c for c, t in self.dotted_targets.items() if t is None)
            if missing:
                # Kept for the uses Eventide cannot take; the others use eventide already.
                self._unmapped(
                    original_node,
                    _code(original_node),
                    f"a module import of google-adk whose uses {', '.join(missing)} Eventide "
                    "lacks: import the names Eventide has from eventide instead",
                )
                statements.append(
                    cst.Import(names=[alias.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
                )
        new_code = "; ".join(_code(s) for s in statements)
        if new_code == _code(original_node):
            return updated_node
        self.report.changes.append(
            Change(
                self._line(original_node),
                _code(original_node),
                new_code or "(removed: nothing in the file uses it)",
            )
        )
        if not statements:
            return cst.RemoveFromParent()
        if len(statements) == 1:
            return statements[0]
        return cst.FlattenSentinel(statements)

    # --- from X import ... ---
    def leave_ImportFrom(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom
    ) -> cst.BaseSmallStatement | cst.FlattenSentinel[cst.BaseSmallStatement]:
        if original_node.relative:
            return updated_node
        module = _dotted(original_node.module)
        if module == "google.genai" or module == _GENAI_TYPES:
            return self._genai(original_node, updated_node, module)
        if not (module == _ADK or module.startswith(_ADK + ".")):
            return updated_node
        if isinstance(original_node.names, cst.ImportStar):
            self._unmapped(
                original_node,
                _code(original_node),
                "a star import: name the imported names (`from eventide import ...`)",
            )
            return updated_node
        mapped: list[cst.ImportAlias] = []
        workflow: list[cst.ImportAlias] = []
        modules: list[cst.BaseSmallStatement] = []
        kept: list[cst.ImportAlias] = []
        for alias in original_node.names:
            name = _dotted(alias.name)
            local = alias.evaluated_alias or name
            target = RENAMED.get(name, name)
            asname = None if local == target else cst.AsName(name=cst.Name(local))
            if (
                module == WORKFLOW_MODULE and target in WORKFLOW_NAMES - TOP_LEVEL_2X
            ) or module in WORKFLOW_NAMES_ELSEWHERE.get(target, ()):
                workflow.append(cst.ImportAlias(name=cst.Name(target), asname=asname))
                continue
            if target in self.eventide_names:
                mapped.append(cst.ImportAlias(name=cst.Name(target), asname=asname))
                continue
            if (
                local in self.module_aliases
                and name not in UNSUPPORTED
                and (self.module_aliases[local] or has_same_path_module(f"{module}.{name}"))
            ):
                statement = self._module(
                    original_node, f"{module}.{name}", local, f"from {module} import {name}"
                )
                if statement is not None:
                    modules.append(statement)
                    continue
                kept.append(alias.with_changes(comma=cst.MaybeSentinel.DEFAULT))
                continue
            kept.append(alias.with_changes(comma=cst.MaybeSentinel.DEFAULT))
            reason = UNSUPPORTED.get(name)
            if reason is None:
                if name[:1].islower() and name not in self.eventide_names and "." not in name:
                    reason = (
                        f"Eventide has no {name!r} (a google-adk module or name): import the "
                        "names it provides from eventide instead"
                    )
                else:
                    reason = f"Eventide has no {name!r}"
            self._unmapped(original_node, f"from {module} import {name}", reason)
        new: list[cst.BaseSmallStatement] = []
        if mapped:
            new.append(cst.ImportFrom(module=cst.Name("eventide"), names=_with_commas(mapped)))
        if workflow:
            new.append(
                cst.ImportFrom(
                    module=cst.Attribute(value=cst.Name("eventide"), attr=cst.Name("workflow")),
                    names=_with_commas(workflow),
                )
            )
        new.extend(modules)
        if not new:
            return updated_node
        self.report.changes.append(
            Change(
                self._line(original_node),
                _code(original_node),
                "; ".join(_code(statement) for statement in new),
            )
        )
        if kept:
            new.append(updated_node.with_changes(names=_with_commas(kept)))
        if len(new) == 1:
            return new[0]
        return cst.FlattenSentinel(new)

    def _genai(
        self, original_node: cst.ImportFrom, updated_node: cst.ImportFrom, module: str
    ) -> cst.ImportFrom | cst.FlattenSentinel[cst.BaseSmallStatement]:
        if isinstance(original_node.names, cst.ImportStar):
            return updated_node
        if module == "google.genai":
            # `from google.genai import types [as t]`: moved when every use is covered.
            names = list(original_node.names)
            if len(names) != 1 or _dotted(names[0].name) != "types":
                return updated_node
            alias = names[0]
            local = alias.evaluated_alias or "types"
            if not self.types_ok.get(local, False):
                return updated_node
            new_import = updated_node.with_changes(module=cst.Name("eventide"))
            self.report.changes.append(
                Change(self._line(original_node), _code(original_node), _code(new_import))
            )
            return new_import
        # `from google.genai.types import Content, Part`
        missing = [
            _dotted(a.name) for a in original_node.names if _dotted(a.name) not in self.types_names
        ]
        if missing:
            self._unmapped(
                original_node,
                _code(original_node),
                f"eventide.types has no {', '.join(missing)}; kept google.genai (Eventide "
                "accepts google.genai objects wherever it takes content)",
            )
            return updated_node
        new_import = updated_node.with_changes(
            module=cst.Attribute(value=cst.Name("eventide"), attr=cst.Name("types"))
        )
        self.report.changes.append(
            Change(self._line(original_node), _code(original_node), _code(new_import))
        )
        return new_import

    # --- dotted google.adk references, and names read from a mapped module ---
    def visit_Attribute(self, node: cst.Attribute) -> bool:
        return not _dotted(node).startswith(_ADK + ".")  # the whole chain is one use

    def leave_Attribute(
        self, original_node: cst.Attribute, updated_node: cst.Attribute
    ) -> cst.BaseExpression:
        chain = _dotted(original_node)
        if chain.startswith(_ADK + "."):
            target = self.dotted_targets.get(chain)
            if target is None:
                self._unmapped(
                    original_node,
                    chain,
                    "a dotted google-adk reference to a name Eventide lacks: import what "
                    "Eventide has from eventide and replace the rest",
                )
                return updated_node
            return cst.parse_expression(target)
        base = original_node.value
        if isinstance(base, cst.Name) and base.value in self.attribute_renames:
            renamed = self.attribute_renames[base.value].get(original_node.attr.value)
            if renamed is not None:
                return updated_node.with_changes(attr=cst.Name(renamed))
        return updated_node

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel[cst.SimpleStatementLine]:
        # An import split in two (mapped names, and the google-adk ones kept) goes on two
        # lines, the first keeping the original's leading comments.
        if len(updated_node.body) <= len(original_node.body):
            return updated_node
        first, *rest = updated_node.body
        lines = [updated_node.with_changes(body=[_last(first)])]
        for statement in rest:
            lines.append(cst.SimpleStatementLine(body=[_last(statement)]))
        return cst.FlattenSentinel(lines)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False  # its dotted module name is not a use

    def visit_Import(self, node: cst.Import) -> bool:
        return False


def _last(statement: cst.BaseSmallStatement) -> cst.BaseSmallStatement:
    return statement.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)


def _with_commas(aliases: Sequence[cst.ImportAlias]) -> list[cst.ImportAlias]:
    last = len(aliases) - 1
    return [
        a.with_changes(
            comma=cst.MaybeSentinel.DEFAULT
            if i == last
            else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
        for i, a in enumerate(aliases)
    ]


def _genai_types_aliases(module: cst.Module) -> set[str]:
    aliases: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if (
                isinstance(small, cst.ImportFrom)
                and _dotted(small.module) == "google.genai"
                and not isinstance(small.names, cst.ImportStar)
            ):
                for alias in small.names:
                    if _dotted(alias.name) == "types":
                        aliases.add(alias.evaluated_alias or "types")
    return aliases


def migrate_source(source: str, path: Path = Path("<source>")) -> FileReport:
    """Migrate one file's source; the report holds the new source when it changed."""
    report = FileReport(path=path)
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        report.error = f"not valid Python, left as it is: {exc.message} (line {exc.raw_line})"
        return report
    _, types_names = _eventide_names()
    aliases = _genai_types_aliases(module)
    types_ok: dict[str, bool] = {}
    wrapper = MetadataWrapper(module)
    if aliases:
        uses = _TypesUses(aliases)
        wrapper.module.visit(uses)
        for alias, used in uses.used.items():
            missing = sorted(used - types_names)
            types_ok[alias] = not missing
            if missing:
                line = _first_line(source, "import types" if alias == "types" else alias)
                report.unmapped.append(
                    Unmapped(
                        line,
                        f"from google.genai import types ({alias}.{', '.join(missing)})",
                        f"eventide.types has no {', '.join(missing)}; kept google.genai "
                        "(Eventide accepts google.genai objects wherever it takes content)",
                    )
                )
    module_uses = ModuleUses(_module_candidates(wrapper.module))
    wrapper.module.visit(module_uses)
    new_module = wrapper.visit(_Migrator(report, types_ok, module_uses))
    if new_module.code != source:
        report.new_source = new_module.code
    report.changes.sort(key=lambda c: c.line)
    report.unmapped.sort(key=lambda u: u.line)
    return report


def _module_candidates(module: cst.Module) -> set[str]:
    """Local names that google-adk imports may bind to a module (``from google.adk.x import
    y`` of a name Eventide does not export, ``import google.adk.x as y``)."""
    eventide_names, _ = _eventide_names()
    names: set[str] = set()
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                if _dotted(small.module).split(".")[:2] != ["google", "adk"]:
                    continue
                for alias in small.names:
                    name = _dotted(alias.name)
                    if RENAMED.get(name, name) not in eventide_names:
                        names.add(alias.evaluated_alias or name)
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    if alias.asname is not None and _dotted(alias.name).startswith(_ADK + "."):
                        names.add(alias.evaluated_alias or _dotted(alias.name))
    return names


def _first_line(source: str, needle: str) -> int:
    for number, line in enumerate(source.splitlines(), start=1):
        if "google.genai" in line and needle in line:
            return number
    return 1


def python_files(path: Path) -> Iterator[Path]:
    """The ``.py`` files under ``path`` (or ``path`` itself), skipping virtualenvs, caches
    and hidden folders."""
    if path.is_file():
        yield path
        return
    for candidate in sorted(path.rglob("*.py")):
        parts = candidate.relative_to(path).parts[:-1]
        if any(
            p.startswith(".") or p in ("__pycache__", "site-packages", "node_modules", "venv")
            for p in parts
        ):
            continue
        yield candidate


def migrate_path(path: Path, *, write: bool) -> list[FileReport]:
    """Migrate every Python file under ``path``; with ``write``, save the changed ones."""
    reports: list[FileReport] = []
    for file in python_files(path):
        report = migrate_source(file.read_text(encoding="utf-8"), file)
        if write and report.new_source is not None:
            file.write_text(report.new_source, encoding="utf-8")
        reports.append(report)
    return reports
