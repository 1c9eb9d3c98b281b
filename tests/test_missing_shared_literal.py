"""DL100 on copies of the shared Literal's members that are not a plain top-level `X = Literal[...]`:
under a module-level `if` (`if TYPE_CHECKING:`) or `try`, and wrapped as `Optional[Literal[...]]`."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import MakeTree

LLM_ARGS = "tensorrt_llm/llmapi/llm_args.py"
TYPES = "tensorrt_llm/_torch/models/probe_types.py"
HEAD = "import typing\nfrom typing import TYPE_CHECKING, Literal, Optional, Union\n\n"  # the copy is on line 4 or 5
MEMBERS = '"VANILLA", "TRTLLM", "FLASHINFER"'


def _findings(make_tree: MakeTree, files: dict[str, str], *select: str) -> list[str]:
    root = make_tree(files)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", ",".join(select or ("DL100",)), str(root)])
    return [line for line in result.output.splitlines() if line.startswith(("tensorrt_llm/", "pyproject.toml"))]


def _copy(name: str, line: int) -> str:
    return (
        f'{TYPES}:{line}:1: DL100 "{name}" copies the members of the shared Literal EncoderAttentionBackend; '
        "import tensorrt_llm.llmapi.llm_args.EncoderAttentionBackend instead"
    )


@pytest.mark.parametrize(
    ("source", "line"),
    [
        (f"if TYPE_CHECKING:\n    Backend = Literal[{MEMBERS}]\nelse:\n    Backend = str\n", 5),
        (f"if typing.TYPE_CHECKING:\n    Backend: typing.TypeAlias = Literal[{MEMBERS}]\n", 5),
        (f"if TYPE_CHECKING:\n    from x import Backend\nelse:\n    Backend = Literal[{MEMBERS}]\n", 7),
        (f"try:\n    Backend = Literal[{MEMBERS}]\nexcept ImportError:\n    pass\n", 5),
        (f"Backend = Optional[Literal[{MEMBERS}]]\n", 4),
        (f"Backend = typing.Optional[typing.Literal[{MEMBERS}]]\n", 4),
        (f"Backend = Union[Literal[{MEMBERS}], None]\n", 4),
        (f"Backend = Union[None, Literal[{MEMBERS}]]\n", 4),
        (f"Backend = Literal[{MEMBERS}] | None\n", 4),
        (f"Backend = None | Literal[{MEMBERS}]\n", 4),
        (f"if TYPE_CHECKING:\n    Backend = Optional[Literal[{MEMBERS}]]\n", 5),
        # red-team 53: inside another type, pydantic's way or a mapping's values
        (f"Backend = typing.Annotated[Literal[{MEMBERS}], object()]\n", 4),
        (f"Backend = Optional[typing.Annotated[Literal[{MEMBERS}], 'doc']]\n", 4),
        (f"Backend = dict[str, Literal[{MEMBERS}]]\n", 4),
    ],
)
def test_a_copy_nested_or_optional_is_reported_like_a_top_level_one(
    make_tree: MakeTree, source: str, line: int
) -> None:
    assert _findings(make_tree, {TYPES: HEAD + source}) == [_copy("Backend", line)]


@pytest.mark.parametrize(
    "source",
    [
        "Backend = Optional[EncoderAttentionBackend]\n",
        'Backend = Optional[Literal["VANILLA", "TRTLLM"]]\n',
        f"Backend = Union[Literal[{MEMBERS}], str]\n",
        f"Backend = Union[Literal[{MEMBERS}], None, str]\n",
        f"Backend = dict[Literal[{MEMBERS}], Literal[{MEMBERS}]]\n",  # two: no one copy to name
        f"Backend = list[Union[Literal[{MEMBERS}], str]]\n",
        'if TYPE_CHECKING:\n    Backend = Literal["VANILLA", "TRTLLM"]\n',
    ],
)
def test_the_shared_literal_reused_or_another_member_set_is_not_a_copy(make_tree: MakeTree, source: str) -> None:
    source = "from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend\n" + source
    assert _findings(make_tree, {TYPES: HEAD + source}) == []


def test_the_shared_literal_defined_under_type_checking_is_the_definition(make_tree: MakeTree) -> None:
    llm_args = (
        "from typing import TYPE_CHECKING, Literal\n\n"
        f"if TYPE_CHECKING:\n    EncoderAttentionBackend = Literal[{MEMBERS}]\n"
        "else:\n    EncoderAttentionBackend = str\n"
    )
    retyped = 'def pick(config):\n    return config.attn_backend == "FLASHINFR"\n'
    assert _findings(make_tree, {LLM_ARGS: llm_args, TYPES: retyped}, "DL100", "DL103") == [
        f'{TYPES}:2:35: DL103 "FLASHINFR" is not a member of EncoderAttentionBackend (did you mean "FLASHINFER"?)'
    ]


BACKENDS = "tensorrt_llm/llmapi/_backends.py"
RETYPED = 'def pick(config):\n    return config.attn_backend == "FLASHINFR"\n'
RETYPED_FINDING = (
    f'{TYPES}:2:35: DL103 "FLASHINFR" is not a member of EncoderAttentionBackend (did you mean "FLASHINFER"?)'
)


@pytest.mark.parametrize(
    ("files", "config"),
    [
        # llm_args re-exports the Literal its private module defines.
        (
            {
                LLM_ARGS: "from tensorrt_llm.llmapi._backends import EncoderAttentionBackend\n\n"
                '__all__ = ["EncoderAttentionBackend"]\n',
                BACKENDS: f"from typing import Literal\n\nEncoderAttentionBackend = Literal[{MEMBERS}]\n",
            },
            "",
        ),
        # The configuration names the package, whose __init__ re-exports it.
        (
            {
                "tensorrt_llm/llmapi/__init__.py": "from .llm_args import EncoderAttentionBackend\n",
                LLM_ARGS: f"from typing import Literal\n\nEncoderAttentionBackend = Literal[{MEMBERS}]\n",
            },
            'shared-literal = "tensorrt_llm.llmapi.EncoderAttentionBackend"\n',
        ),
    ],
)
def test_a_re_exported_shared_literal_is_found_where_it_is_defined(
    make_tree: MakeTree, files: dict[str, str], config: str
) -> None:
    """DL100 said "not defined as a typing.Literal" of a re-export (DL104 already followed one),
    and no backend name was checked against the members."""
    pyproject = '[tool.declint]\nroots = ["tensorrt_llm"]\n' + config
    found = _findings(make_tree, {**files, TYPES: RETYPED, "pyproject.toml": pyproject}, "DL100", "DL103")
    assert found == [RETYPED_FINDING]


def test_a_re_exported_shared_literal_defined_twice_is_reported_where_it_is_defined(make_tree: MakeTree) -> None:
    files = {
        LLM_ARGS: "from tensorrt_llm.llmapi._backends import EncoderAttentionBackend\n",
        BACKENDS: f"from typing import Literal\n\nEncoderAttentionBackend = Literal[{MEMBERS}]\n"
        f"EncoderAttentionBackend = Literal[{MEMBERS}]\n",
    }
    root = make_tree(files)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", "DL100", str(root)])
    assert result.output.splitlines()[0] == (
        f'{BACKENDS}:4:1: DL100 shared Literal "EncoderAttentionBackend" is defined twice in '
        "tensorrt_llm.llmapi._backends (first at line 3); keep one definition"
    )
    assert len(result.output.splitlines()) == 2  # and the summary: the definition is no copy of itself


def test_an_optional_shared_literal_is_not_its_definition(make_tree: MakeTree) -> None:
    llm_args = f"from typing import Literal, Optional\n\nEncoderAttentionBackend = Optional[Literal[{MEMBERS}]]\n"
    assert _findings(make_tree, {LLM_ARGS: llm_args}) == [
        f'{LLM_ARGS}:3:1: DL100 shared Literal "EncoderAttentionBackend" is not defined as a typing.Literal in '
        "tensorrt_llm.llmapi.llm_args"
    ]


@pytest.mark.parametrize(
    ("llm_args", "state"),
    [
        (f"EncoderAttentionBackend = Literal[{MEMBERS}]\n", ("ok", "")),
        (f"if TYPE_CHECKING:\n    import x\nelse:\n    EncoderAttentionBackend = Literal[{MEMBERS}]\n", ("ok", "")),
        (f"if TYPE_CHECKING:\n    EncoderAttentionBackend = Literal[{MEMBERS}]\n", ("missing", "not found")),
        (f"EncoderAttentionBackend = Optional[Literal[{MEMBERS}]]\n", ("missing", "not found")),
    ],
)
def test_shim_targets_finds_only_a_literal_the_running_program_sees(
    make_tree: MakeTree, llm_args: str, state: tuple[str, str]
) -> None:
    """The runtime shim reads typing.get_args of the shared Literal: one only a type checker
    sees, or an Optional of one, is not there for it."""
    root = make_tree({LLM_ARGS: HEAD + llm_args})
    result = CliRunner().invoke(cli, ["shim-targets", "--format", "json", str(root / "tensorrt_llm")])
    rows = {row["key"]: (row["state"], row["detail"]) for row in json.loads(result.output)["targets"]}
    assert rows["shared-literal"] == state


VERSIONED = (
    "import sys\n"
    "if sys.version_info >= (3, 8):\n"
    "    from typing import Literal\n"
    f"    EncoderAttentionBackend = Literal[{MEMBERS}]\n"
    "elif sys.version_info >= (3, 7):\n"
    "    from typing_extensions import Literal\n"
    f"    EncoderAttentionBackend = Literal[{MEMBERS}]\n"
    "else:\n"
    f"    EncoderAttentionBackend = Literal[{MEMBERS}]\n"
)


@pytest.mark.parametrize(
    ("llm_args", "reported"),
    [
        # One definition per arm of an if / elif / else: only one ever runs.
        (VERSIONED, []),
        # A definition after the if runs with either arm's; in the same arm twice, both run.
        (VERSIONED + f"EncoderAttentionBackend = Literal[{MEMBERS}]\n", [(10, 4)]),
        (VERSIONED.replace("else:\n", f"    EncoderAttentionBackend = Literal[{MEMBERS}]\nelse:\n"), [(8, 7)]),
        # try / except: the try's definition may run before the except's.
        (
            f"from typing import Literal\ntry:\n    EncoderAttentionBackend = Literal[{MEMBERS}]\n"
            f"except ImportError:\n    EncoderAttentionBackend = Literal[{MEMBERS}]\n",
            [(5, 3)],
        ),
    ],
)
def test_definitions_in_exclusive_arms_of_an_if_are_one_definition(
    make_tree: MakeTree, llm_args: str, reported: list[tuple[int, int]]
) -> None:
    assert _findings(make_tree, {LLM_ARGS: llm_args}) == [
        f'{LLM_ARGS}:{line}:1: DL100 shared Literal "EncoderAttentionBackend" is defined twice in '
        f"tensorrt_llm.llmapi.llm_args (first at line {first}); keep one definition"
        for line, first in reported
    ]


def test_arms_of_an_if_with_other_members_are_reported(make_tree: MakeTree) -> None:
    """Only one arm runs, but which names are valid then depends on it: the first arm's members
    were used silently (FLASHINFER passed DL104 though the else arm lacks it)."""
    llm_args = VERSIONED.replace(
        f"else:\n    EncoderAttentionBackend = Literal[{MEMBERS}]\n",
        'else:\n    EncoderAttentionBackend = Literal["VANILLA", "TRTLLM"]\n',
    )
    assert _findings(make_tree, {LLM_ARGS: llm_args}) == [
        f'{LLM_ARGS}:9:1: DL100 shared Literal "EncoderAttentionBackend" has other members in another branch of '
        "the if at line 2 (line 4: VANILLA, TRTLLM, FLASHINFER): which names are valid depends on the branch "
        "that ran; give both branches the same members"
    ]
