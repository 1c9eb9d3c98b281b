"""DL100 missing-shared-literal."""

from __future__ import annotations

from typing import ClassVar

from declint.config import Config, key_line
from declint.discovery import display_path
from declint.facts import LiteralDef, ModuleFacts, exclusive, parting_if
from declint.index import ProjectIndex
from declint.rule import Invalid, ProjectRule, Valid
from declint.types import Finding, Position, Span


class MissingSharedLiteral(ProjectRule):
    """The one shared Literal of encoder attention-backend names is missing or defined twice.

    Every other check validates backend names against the members of one `typing.Literal`
    (`shared-literal`, by default `tensorrt_llm.llmapi.llm_args.EncoderAttentionBackend`). If it
    cannot be found, declarations and comparisons go unvalidated; if it is defined twice, or
    copied under another name with the same members, the copies drift apart. A copy is found
    at module level, in `if` and `try` blocks too (`if TYPE_CHECKING:`), and wrapped as
    `Optional[Literal[...]]`, `Union[Literal[...], None]` or `Literal[...] | None` (write
    `Optional[EncoderAttentionBackend]`), or inside another type as its only Literal
    (`Annotated[Literal[...], Field(...)]`, `dict[str, Literal[...]]`; not in a union with another
    type, `Union[Literal[...], str]`). A wrapped Literal is never the shared one's definition.
    A configured name that re-exports the Literal (`llm_args` importing it, a package's
    `__init__`) is followed to the module that defines it. Definitions in different arms of one
    `if` (`if sys.version_info >= ...:` / `else:`) are one definition, only one of them runs, when
    their members agree; with other members, which names are valid depends on the arm: reported.

    Reported at the second definition or the copy; when the module itself is missing, at the
    configuration's `shared-literal` key (when defaults are used: at the project's
    pyproject.toml, or without one at the first indexed Python file, line 1). A file at the
    module's path that is another module (a directory on the way without `__init__.py` that no
    package holds: declint reads a namespace package only inside a package, as the module names
    an import of it spells) is named in the message.
    """

    CODE = "DL100"
    NAME = "missing-shared-literal"
    SUMMARY = "the configured shared Literal of backend names is not found, or defined twice"
    OPTIONS = ("shared-literal", "roots")

    VALID: ClassVar = (
        Valid(
            'from typing import Literal\nEncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]\n',
            path="tensorrt_llm/llmapi/llm_args.py",
        ),
        Valid(
            "from typing import Optional\n"
            "from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend\n\n"
            "OptionalBackend = Optional[EncoderAttentionBackend]\n",
        ),
    )
    INVALID: ClassVar = (
        Invalid(
            "from typing import Literal\n"
            'EncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]\n'
            'EncoderAttentionBackend = Literal["VANILLA", "TRTLLM"]\n',
            expect=((3, 0),),
            message=(
                'shared Literal "EncoderAttentionBackend" is defined twice in tensorrt_llm.llmapi.llm_args '
                "(first at line 2); keep one definition"
            ),
            path="tensorrt_llm/llmapi/llm_args.py",
        ),
        Invalid(
            'from typing import Literal\nAttnBackends = Literal["FLASHINFER", "TRTLLM", "VANILLA"]\n',
            expect=((2, 0),),
            message=(
                '"AttnBackends" copies the members of the shared Literal EncoderAttentionBackend; '
                "import tensorrt_llm.llmapi.llm_args.EncoderAttentionBackend instead"
            ),
        ),
        Invalid(
            "from typing import TYPE_CHECKING, Literal, Optional\n\n"
            "if TYPE_CHECKING:\n"
            '    VisionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]\n'
            'OptionalBackend = Optional[Literal["FLASHINFER", "TRTLLM", "VANILLA"]]\n',
            expect=((4, 0), (5, 0)),
            message=(
                '"VisionBackend" copies the members of the shared Literal EncoderAttentionBackend; '
                "import tensorrt_llm.llmapi.llm_args.EncoderAttentionBackend instead"
            ),
        ),
        Invalid(
            "EncoderAttentionBackend = str\n",
            expect=((1, 0),),
            path="tensorrt_llm/llmapi/llm_args.py",
            message=(
                'shared Literal "EncoderAttentionBackend" is not defined as a typing.Literal '
                "in tensorrt_llm.llmapi.llm_args"
            ),
        ),
    )

    def check_project(self, index: ProjectIndex, config: Config) -> list[Finding]:
        module = index.literal_qualname.rpartition(".")[0]
        facts = index.modules.get(module)
        if facts is None:
            missing = self._missing_module(index, config, module)
            return [missing] if missing is not None else []
        if facts.error is not None:  # the module is there: "not found" would send the user elsewhere
            message = (
                f"shared Literal {index.literal_qualname} cannot be read: {module} does not parse "
                f"({facts.error}, line {facts.error_line}; see its DL000)"
            )
            return [self._finding(facts.path, facts.error_line, message)]
        definitions = index.literal_definitions()
        home_module, _, home_name = index.literal_home.rpartition(".")
        home = index.modules.get(home_module, facts)
        if not definitions:
            line = next((ln for target, ln in home.assignments if target == home_name), 1)
            where = module if home is facts else f"{home_module} (which {module} re-exports it from)"
            return [
                self._finding(
                    home.path, line, f'shared Literal "{home_name}" is not defined as a typing.Literal in {where}'
                )
            ]
        findings = [
            self._finding(home.path, extra.line, self._second_definition(home_name, home_module, first, extra))
            for number, extra in enumerate(definitions[1:], 1)
            if (first := self._clash(extra, definitions[:number])) is not None
        ]
        return findings + self._copies(index, definitions[0].members)

    @staticmethod
    def _clash(extra: LiteralDef, earlier: list[LiteralDef]) -> LiteralDef | None:
        """The earlier definition `extra` is a problem with: one that also runs, or one in another
        arm of an `if` (only one runs) with other members, so that which names are valid depends
        on which arm ran (`if sys.version_info ...: X = Literal[...] else: X = Literal[...]`)."""
        for definition in earlier:
            if not exclusive(extra.branch, definition.branch) or set(extra.members) != set(definition.members):
                return definition
        return None

    @staticmethod
    def _second_definition(name: str, module: str, first: LiteralDef, extra: LiteralDef) -> str:
        parting = parting_if(extra.branch, first.branch)
        if parting is None:
            return f'shared Literal "{name}" is defined twice in {module} (first at line {first.line}); keep one definition'
        return (
            f'shared Literal "{name}" has other members in another branch of the if at line {parting} '
            f"(line {first.line}: {', '.join(first.members)}): which names are valid depends on the branch that "
            "ran; give both branches the same members"
        )

    def _copies(self, index: ProjectIndex, members: tuple[str, ...]) -> list[Finding]:
        wanted = frozenset(members)
        findings = []
        for module in index.modules.values():
            for literal in module.literals:
                if literal.qualname != index.literal_home and len(wanted) > 1 and frozenset(literal.members) == wanted:
                    findings.append(
                        self._finding(
                            module.path,
                            literal.line,
                            f'"{literal.name}" copies the members of the shared Literal {index.literal_name}; '
                            f"import {index.literal_qualname} instead",
                        )
                    )
        return findings

    def _missing_module(self, index: ProjectIndex, config: Config, module: str) -> Finding | None:
        roots = ", ".join(config.str_list("roots"))
        message = (
            f"shared Literal {index.literal_qualname} not found: no module {module} under the "
            f"indexed roots ({roots}); set shared-literal in [tool.declint]"
        )
        misnamed = _file_of(index, module)
        if misnamed is not None:
            message = (
                f"shared Literal {index.literal_qualname} not found: {misnamed.path} is module {misnamed.module}, "
            )
            if module.endswith("." + misnamed.module):
                message += (
                    f"not {module}, because a directory above it has no __init__.py (declint reads a namespace "
                    "package only inside a package): add the __init__.py, or set shared-literal in [tool.declint]"
                )
            else:
                message += (
                    f"not {module}: the __init__.py files around it make it part of a larger package; set "
                    f"shared-literal to {misnamed.module}.{index.literal_name}, or remove the __init__.py above "
                    "the package"
                )
        if config.source is None:
            anchor = _default_anchor(index, config)
            return self._finding(anchor, 1, message + " (default configuration in use)") if anchor else None
        text = config.source.read_text(encoding="utf-8")
        line = key_line(text, "shared-literal") or 1
        return self._finding(display_path(config.source, config.root), line, message)

    def _finding(self, path: str, line: int, message: str) -> Finding:
        return Finding(self.CODE, self.NAME, path, Span(Position(line, 0), Position(line, 0)), message)


def _file_of(index: ProjectIndex, module: str) -> ModuleFacts | None:
    """The indexed file whose path spells `module` (`tensorrt_llm/llmapi/llm_args.py`) under
    another module name: a package directory on the way without `__init__.py`."""
    wanted = module.replace(".", "/") + ".py"
    found = [f for f in index.modules.values() if f.path == wanted or f.path.endswith("/" + wanted)]
    # The shortest path first: the source tree's file, not a copy under build/lib/.
    return min((f for f in found if f.module != module), key=lambda f: (len(f.path), f.path), default=None)


def _default_anchor(index: ProjectIndex, config: Config) -> str | None:
    """Where a project without a configuration file hears of the missing Literal: its
    pyproject.toml, else its first indexed Python file; never a file that does not exist. None
    when the index holds no file at all (nothing uses the Literal)."""
    try:
        # Opened, not stat-ed: the run's input recorder sees the open (existing or not), so a
        # cached finding is recomputed when the file comes or goes.
        with open(config.root / "pyproject.toml", "rb"):
            return "pyproject.toml"
    except OSError:
        pass
    return min((facts.path for facts in index.modules.values()), default=None)
