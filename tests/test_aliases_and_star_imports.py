"""A base named through a module-level alias or a star import is followed across files, as an
import is (red-team, 2026-12-02: both gave a false DL102, and its unsafe fix declared the
inherited configurable encoder fixed). Each test fails on the code before the change."""

from __future__ import annotations

import itertools
from pathlib import Path

from tests.conftest import MakeTree
from tests.test_declaration_forms import IMPORTS, MODEL, check, registered

BASE = (
    IMPORTS + "\n\nclass QwenVL(MultimodalModelMixin):\n" + '    encoder_attention_backends = {"vision": ("TRTLLM",)}\n'
)


def test_a_base_named_through_a_module_level_alias_is_followed(make_tree: MakeTree) -> None:
    aliased = (
        IMPORTS + "from tensorrt_llm._torch.models.modeling_base import QwenVL\n\n"
        "Alias = QwenVL\n\n\n" + registered("x", "image") + "class B(Alias):\n    pass\n"
    )
    # An alias defined in the base's module and imported from there, and one rebound later
    # (which name it holds when the class is made is not known: no alias).
    exported = (
        IMPORTS
        + "from tensorrt_llm._torch.models.modeling_base import Exported\n\n\n"
        + registered("y", "image")
        + "class C(Exported):\n    pass\n"
    )
    rebound = (
        IMPORTS + "from tensorrt_llm._torch.models.modeling_base import QwenVL\n\n"
        "Maybe = QwenVL\nMaybe = MultimodalModelMixin\n\n\n" + registered("z", "image") + "class D(Maybe):\n    pass\n"
    )
    root = make_tree(
        {
            MODEL + "modeling_base.py": BASE + "\n\nExported = QwenVL\n",
            MODEL + "modeling_alias.py": aliased,
            MODEL + "modeling_exported.py": exported,
            MODEL + "modeling_rebound.py": rebound,
        }
    )
    code, lines = check("--select", "DL102", str(root))
    assert code == 1
    assert lines == [
        f'{MODEL}modeling_rebound.py:12:7: DL102 multimodal model "D" has no encoder_attention_backends declaration '
        "(own or inherited); declare its encoders: vision (registered modalities: image)",
        "Found 1 finding in 18 files.",
    ]


def test_a_base_from_a_star_import_is_followed(make_tree: MakeTree) -> None:
    middle = "from tensorrt_llm._torch.models.modeling_base import *\n\n\nclass Mid(QwenVL):\n    pass\n"
    star = IMPORTS + "from .modeling_mid import *\n\n\n" + registered("s", "image") + "class S(Mid):\n    pass\n"
    root = make_tree(
        {MODEL + "modeling_base.py": BASE, MODEL + "modeling_mid.py": middle, MODEL + "modeling_star.py": star}
    )
    for target in (root, root / MODEL / "modeling_star.py"):  # the whole tree, and the one file (pre-commit)
        code, lines = check("--select", "DL102", str(target))
        assert (code, lines) == (0, [lines[-1]]) and lines[-1].startswith("All clear"), lines


def test_of_a_package_and_a_module_of_one_name_the_package_is_the_one_imported(make_tree: MakeTree) -> None:
    """`basemod/__init__.py` next to `basemod.py`: Python imports the package (its finder looks
    for the directory first), so the base is the package's (red-team, 2026-12-02: the module's
    was taken, the smaller path, and gave a false DL102)."""
    importer = (
        IMPORTS + "from tensorrt_llm._torch.models.basemod import QwenVL\n\n\n"
        + registered("x", "image") + "class B(QwenVL):\n    pass\n"
    )  # fmt: skip
    stale = IMPORTS + "\n\nclass QwenVL(MultimodalModelMixin):\n    pass\n"
    root = make_tree(
        {
            MODEL + "basemod/__init__.py": BASE,
            MODEL + "basemod.py": stale,
            MODEL + "modeling_b.py": importer,
        }
    )
    code, lines = check("--select", "DL102", str(root))
    assert (code, lines) == (0, ["All clear: 17 files checked."])


def test_of_one_module_name_in_two_roots_the_smaller_path_is_indexed_package_or_not() -> None:
    """Red-team 44 of 74683d2: the package comes first only beside a module of the same directory;
    across roots either may come first on `sys.path`, and the smaller path decides, as before."""
    from declint.config import load_config
    from declint.facts import ModuleFacts
    from declint.index import ProjectIndex

    config = load_config(None, default_root=Path("/nonexistent"), known_codes=frozenset())
    across = [ModuleFacts("basemod", "z_lib/basemod/__init__.py"), ModuleFacts("basemod", "a_src/basemod.py")]
    beside = [ModuleFacts("basemod", "a_src/basemod.py"), ModuleFacts("basemod", "a_src/basemod/__init__.py")]
    # Three files: the module beside the package never wins, the smaller path of the others does
    # (a pairwise rule went round in a circle, and the input order decided; red-team 45).
    three = [ModuleFacts("foo", p) for p in ("src/foo/__init__.py", "src/foo.py", "src/foo.v2/foo.py")]
    for facts, expected in (
        (across, "a_src/basemod.py"),
        (beside, "a_src/basemod/__init__.py"),
        (three, "src/foo.v2/foo.py"),
    ):
        for order in itertools.permutations(facts):
            assert ProjectIndex.build(list(order), config).modules[facts[0].module].path == expected
