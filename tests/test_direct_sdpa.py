"""DL101: which names and `self.` attributes are SDPA (scoping, alias forms, base classes) and
which owning models count (an encoder-free `{}` subclass owns no encoder)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from declint.cli import cli
from declint.config import load_config
from declint.rules import RULES_BY_CODE
from declint.rules.direct_sdpa import DirectSdpa
from tests.conftest import MakeTree

MODEL = "tensorrt_llm/_torch/models/modeling_probe.py"
SDPA = "torch.nn.functional.scaled_dot_product_attention"
HEADER = (
    "import torch.nn.functional as F\n"
    "from torch import nn\n"
    "from .modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin\n"
    "from .modeling_utils import MultimodalPlaceholderMetadata, register_input_processor\n"
)  # 4 lines: the snippets' lines below are numbered from 5


def _model(*towers: str, vision: str = '("VANILLA", "TRTLLM", "FLASHINFER")') -> str:
    """A configurable-vision model that owns `towers` (appended after the snippet)."""
    built = "".join(f"        self.t{number} = {tower}()\n" for number, tower in enumerate(towers))
    return (
        "\n@register_input_processor(object, model_type='probe', placeholder_metadata="
        "MultimodalPlaceholderMetadata(placeholder_map={'image': '<image>'}))\n"
        "class ProbeVLModel(MultimodalModelMixin, nn.Module):\n"
        f"    encoder_attention_backends = {{'vision': {vision}}}\n\n"
        f"    def __init__(self):\n{built}"
    )


def _bypass(scope: str) -> str:
    return (
        f"`{scope}` calls {SDPA} directly, but ProbeVLModel declares its vision encoder configurable "
        "(VANILLA, TRTLLM, FLASHINFER): an encoder_attention_backend override is silently bypassed; "
        "route the call through the attention backend or declare the encoder FixedEncoderAttention(reason)"
    )


def _undeclared(scope: str) -> str:
    return (
        f"`{scope}` calls {SDPA} directly in an encoder no model declares; declare the encoder "
        'FixedEncoderAttention("<reason>") or route the call through the attention backend'
    )


def dl101(make_tree: MakeTree, files: dict[str, str], checked: str = MODEL) -> list[str]:
    """`line:column: message` (1-based, as printed) of each DL101; all must be in `checked`."""
    root = make_tree(files)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", "DL101", str(root / checked)])
    assert result.exit_code in (0, 1), result.output
    found = []
    for line in result.output.splitlines():
        match = re.match(r"(\S+):(\d+:\d+): DL101 (.*)", line)
        if match:
            assert match.group(1) == checked
            found.append(f"{match.group(2)}: {match.group(3)}")
    return found


# ---- scope: an alias counts where Python would look the name up (A4) --------------------------


def test_a_local_alias_does_not_leak_into_another_function(make_tree: MakeTree) -> None:
    """The report's case sdpa2: `attn` is SDPA in one function, a loop variable in another."""
    source = HEADER + (
        "\ndef eager_attention(q, k, v):\n"  # 6
        "    attn = F.scaled_dot_product_attention\n"
        "    return attn(q, k, v)\n"  # 8: reported (the alias's own scope)
        "\nclass VisionTower(nn.Module):\n"
        "    def forward(self, x, metadata):\n"
        "        for attn in self.layers:\n"
        "            x = attn(x, metadata)\n"  # 13: a loop variable, not SDPA
        "        return eager_attention(x, x, x)\n"
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == [f"8:12: {_bypass('eager_attention')}"]


def test_a_local_alias_counts_in_nested_scopes_that_do_not_rebind_it(make_tree: MakeTree) -> None:
    source = HEADER + (
        "\nclass VisionTower(nn.Module):\n"  # 6
        "    def forward(self, q, k, v):\n"
        "        attn = F.scaled_dot_product_attention\n"
        "        def inner():\n"
        "            return attn(q, k, v)\n"  # 10: reported
        "        def rebinds(attn):\n"
        "            return attn(q, k, v)\n"  # 12: a parameter of its own
        "        return inner, rebinds, [attn(a, b, c) for a, b, c in q]\n"  # 13: reported
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == [
        f"10:20: {_bypass('VisionTower.forward.inner')}",
        f"13:33: {_bypass('VisionTower.forward')}",
    ]


def test_a_module_alias_counts_everywhere_unless_shadowed_locally(make_tree: MakeTree) -> None:
    source = HEADER + (
        "\nattention = F.scaled_dot_product_attention\n"  # 6
        "\nclass VisionTower(nn.Module):\n"
        "    def forward(self, q, k, v, attention=None):\n"
        "        return attention(q, k, v)\n"  # 10: the parameter shadows the alias
        "    def local(self, q, k, v):\n"
        "        attention = self.backend\n"
        "        return attention(q, k, v)\n"  # 13: a local that is not an alias shadows it
        "    def module(self, q, k, v):\n"
        "        return attention(q, k, v)\n"  # 15: the module's alias
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == [f"15:16: {_bypass('VisionTower.module')}"]


def test_a_global_declaration_makes_the_alias_module_wide(make_tree: MakeTree) -> None:
    source = HEADER + (
        "\ndef setup():\n"  # 6
        "    global kernel\n"
        "    kernel = F.scaled_dot_product_attention\n"
        "\nclass VisionTower(nn.Module):\n"
        "    def forward(self, q, k, v):\n"
        "        return kernel(q, k, v)\n"  # 12
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == [f"12:16: {_bypass('VisionTower.forward')}"]


def test_a_class_attribute_is_no_name_in_the_class_methods(make_tree: MakeTree) -> None:
    """A class body's names are not visible from its methods: only `self.attn_fn` reaches it."""
    source = HEADER + (
        "\nattn_fn = None\n"  # 6
        "\nclass VisionTower(nn.Module):\n"
        "    attn_fn = F.scaled_dot_product_attention\n"
        "    def forward(self, q, k, v):\n"
        "        return attn_fn(q, k, v) + self.attn_fn(q, k, v)\n"  # 11: only the second
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == [f"11:35: {_bypass('VisionTower.forward')}"]


# ---- alias forms (A2) -----------------------------------------------------------------------


def test_annotated_assignments_are_aliases(make_tree: MakeTree) -> None:
    source = HEADER + (
        "from typing import Callable\n"  # 5
        "\nclass VisionTower(nn.Module):\n"
        "    def __init__(self):\n"
        "        self.attn_fn: Callable = F.scaled_dot_product_attention\n"
        "    def forward(self, q, k, v):\n"
        "        attn: Callable = F.scaled_dot_product_attention\n"
        "        return self.attn_fn(q, k, v), attn(q, k, v)\n"  # 12
        "    def annotated_only(self, q, k, v):\n"
        "        attn: Callable\n"  # an annotation binds nothing
        "        return attn(q, k, v)\n"
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == [
        f"12:16: {_bypass('VisionTower.forward')}",
        f"12:39: {_bypass('VisionTower.forward')}",
    ]


def test_either_branch_of_a_conditional_expression_makes_an_alias(make_tree: MakeTree) -> None:
    source = HEADER + (
        "\nclass VisionTower(nn.Module):\n"  # 6
        "    def __init__(self, use_sdpa):\n"
        "        self.attn_fn = F.scaled_dot_product_attention if use_sdpa else self.eager\n"
        "        self.other_fn = self.eager if use_sdpa else F.scaled_dot_product_attention\n"
        "        self.plain_fn = self.eager if use_sdpa else self.flash\n"
        "    def forward(self, q, k, v):\n"
        "        return self.attn_fn(q, k, v), self.other_fn(q, k, v), self.plain_fn(q, k, v)\n"  # 12
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == [
        f"12:16: {_bypass('VisionTower.forward')}",
        f"12:39: {_bypass('VisionTower.forward')}",
    ]


def test_class_attributes_and_staticmethod_are_aliases(make_tree: MakeTree) -> None:
    source = HEADER + (
        "\nclass ClassAttribute(nn.Module):\n"  # 6
        "    attn_fn = F.scaled_dot_product_attention\n"
        "    def forward(self, q, k, v):\n"
        "        return self.attn_fn(q, k, v)\n"  # 9
        "\nclass Static(nn.Module):\n"
        "    attn_fn = staticmethod(F.scaled_dot_product_attention)\n"
        "    def forward(self, q, k, v):\n"
        "        return self.attn_fn(q, k, v)\n"  # 14
        "\nclass Method(nn.Module):\n"
        "    attn_fn = staticmethod(F.softmax)\n"
        "    def forward(self, q, k, v):\n"
        "        return self.attn_fn(q, k, v)\n"  # 19: another function
    )
    assert dl101(make_tree, {MODEL: source + _model("ClassAttribute", "Static", "Method")}) == [
        f"9:16: {_bypass('ClassAttribute.forward')}",
        f"14:16: {_bypass('Static.forward')}",
    ]


def test_nested_partials_and_torch_compile_are_one_alias(make_tree: MakeTree) -> None:
    """Red-team 53: the inner partial of `partial(partial(F.sdpa, ...), ...)` (or `partial(getattr(...))`)
    was reported as a module-level call, even under a fixed declaration; `torch.compile(F.sdpa)`
    was no alias."""
    source = HEADER + (
        "import functools\nimport torch\n"  # 5-6
        "nested = functools.partial(functools.partial(F.scaled_dot_product_attention, dropout_p=0), is_causal=False)\n"
        'through_getattr = functools.partial(getattr(F, "scaled_dot_product_attention"), dropout_p=0.0)\n'
        "compiled = torch.compile(mode='max-autotune')(torch.compile(F.scaled_dot_product_attention, dynamic=True))\n"
        "\nclass Tower(nn.Module):\n"  # 11
        "    def forward(self, q, k, v, run):\n"
        "        run(functools.partial(functools.partial(F.scaled_dot_product_attention), scale=1.0))\n"  # 13
        "        return nested(q, k, v) + through_getattr(q, k, v) + compiled(q, k, v)\n"  # 14
    )
    assert dl101(make_tree, {MODEL: source + _model("Tower")}) == [
        f"13:13: {_bypass('Tower.forward')}",
        f"14:16: {_bypass('Tower.forward')}",
        f"14:34: {_bypass('Tower.forward')}",
        f"14:61: {_bypass('Tower.forward')}",
    ]
    fixed = _model("Tower", vision='FixedEncoderAttention("calls SDPA directly")')
    assert dl101(make_tree, {MODEL: source + fixed}) == []


def test_an_attribute_set_by_a_base_class_in_the_file(make_tree: MakeTree) -> None:
    source = HEADER + (
        "\nclass AttnBase(nn.Module):\n"  # 6
        "    def __init__(self):\n"
        "        self.attn_fn = F.scaled_dot_product_attention\n"
        "\nclass Middle(AttnBase):\n"
        "    pass\n"
        "\nclass GlobalAttn(Middle):\n"
        "    def forward(self, q, k, v):\n"
        "        return self.attn_fn(q, k, v)\n"  # 15: through two levels
        "\nclass RoutedAttn(AttnBase):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.attn_fn = self.backend.forward\n"
        "    def forward(self, q, k, v):\n"
        "        return self.attn_fn(q, k, v)\n"  # 22: its own assignment shadows the base's
    )
    assert dl101(make_tree, {MODEL: source + _model("GlobalAttn", "RoutedAttn")}) == [
        f"15:16: {_bypass('GlobalAttn.forward')}"
    ]


def test_an_instance_attribute_hides_class_attributes_and_methods(make_tree: MakeTree) -> None:
    """`self.attn_fn = ...` in a base's `__init__` wins over a subclass's method of that name; a
    subclass's method shadows a base's class attribute."""
    source = HEADER + (
        "\nclass InstanceBase(nn.Module):\n"  # 6
        "    def __init__(self):\n"
        "        self.attn_fn = F.scaled_dot_product_attention\n"
        "\nclass WithMethod(InstanceBase):\n"
        "    def attn_fn(self, q, k, v):\n"
        "        return q\n"
        "    def forward(self, q, k, v):\n"
        "        return self.attn_fn(q, k, v)\n"  # 14: the instance attribute is SDPA
        "\nclass ClassBase(nn.Module):\n"
        "    attn_fn = F.scaled_dot_product_attention\n"
        "\nclass Overrides(ClassBase):\n"
        "    def attn_fn(self, q, k, v):\n"
        "        return q\n"
        "    def forward(self, q, k, v):\n"
        "        return self.attn_fn(q, k, v)\n"  # 22: the method shadows the class attribute
        "\nclass Reassigns(ClassBase):\n"
        "    def __init__(self):\n"
        "        self.attn_fn = self.backend.forward\n"
        "    def forward(self, q, k, v):\n"
        "        return self.attn_fn(q, k, v)\n"  # 28: the instance attribute is no alias
    )
    assert dl101(make_tree, {MODEL: source + _model("WithMethod", "Overrides", "Reassigns")}) == [
        f"14:16: {_bypass('WithMethod.forward')}"
    ]


def test_a_class_of_the_same_name_elsewhere_is_no_base(make_tree: MakeTree) -> None:
    """`Base` resolves to the import, not to the nested class that happens to share its name."""
    source = HEADER + (
        "from .other import Base\n"  # 5
        "\nclass Holder:\n"
        "    class Base(nn.Module):\n"
        "        def __init__(self):\n"
        "            self.attn_fn = F.scaled_dot_product_attention\n"
        "\nclass VisionTower(Base):\n"
        "    def forward(self, q, k, v):\n"
        "        return self.attn_fn(q, k, v)\n"  # 14
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == []


def test_a_star_import_of_the_sdpa_module(make_tree: MakeTree) -> None:
    source = HEADER + (
        "from torch.nn.functional import *\n"  # 5
        "from .other import *\n"
        "\nclass VisionTower(nn.Module):\n"
        "    def forward(self, q, k, v, softmax):\n"
        "        return scaled_dot_product_attention(q, k, v), softmax(q)\n"  # 10
        "    def shadowed(self, q, k, v, scaled_dot_product_attention):\n"
        "        return scaled_dot_product_attention(q, k, v)\n"
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == [f"10:16: {_bypass('VisionTower.forward')}"]


def test_a_star_import_of_another_module_is_not_sdpa(make_tree: MakeTree) -> None:
    source = HEADER + (
        "from torch.nn import *\n"  # 5
        "\nclass VisionTower(nn.Module):\n"
        "    def forward(self, q, k, v):\n"
        "        return scaled_dot_product_attention(q, k, v)\n"
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == []


def test_a_walrus_alias_reports_its_call(make_tree: MakeTree) -> None:
    source = HEADER + (
        "\nclass VisionTower(nn.Module):\n"  # 6
        "    def forward(self, q, k, v):\n"
        "        if (fn := F.scaled_dot_product_attention) is not None:\n"
        "            return fn(q, k, v)\n"  # 9
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == [f"9:20: {_bypass('VisionTower.forward')}"]


# ---- owners: an encoder-free `{}` model owns no encoder (A5) ---------------------------------

FIXED_BASE = HEADER + (
    "\nclass VisionAttention(nn.Module):\n"  # 6
    "    def forward(self, q, k, v):\n"
    "        return F.scaled_dot_product_attention(q, k, v)\n"  # 8
    "\n@register_input_processor(object, model_type='probe', placeholder_metadata="
    "MultimodalPlaceholderMetadata(placeholder_map={'image': '<image>'}))\n"
    "class ProbeVLModel(MultimodalModelMixin, nn.Module):\n"
    "    encoder_attention_backends = {'vision': FixedEncoderAttention('eager SDPA tower')}\n\n"
    "    def __init__(self):\n"
    "        self.tower = VisionAttention()\n"
)
TEXT = "tensorrt_llm/_torch/models/modeling_probe_text.py"


def test_an_encoder_free_subclass_does_not_cancel_the_fixed_declaration(make_tree: MakeTree) -> None:
    """The report's case own1: the subclass declares `{}` and inherits the tower's reference."""
    subclass = (
        "from .modeling_probe import ProbeVLModel\n\n"
        "class ProbeTextModel(ProbeVLModel):\n"
        "    encoder_attention_backends = {}\n\n"
        "class ProbeTextChild(ProbeTextModel):\n"  # inherits the `{}`
        "    pass\n"
    )
    assert dl101(make_tree, {MODEL: FIXED_BASE, TEXT: subclass}) == []


def test_a_model_without_a_declaration_still_reads_no_model_declares(make_tree: MakeTree) -> None:
    """Only an explicit `{}` owns nothing: a model that declares nothing at all (only the mixin's
    default) is an owner that leaves the encoder undeclared."""
    undeclared = FIXED_BASE.replace(
        "    encoder_attention_backends = {'vision': FixedEncoderAttention('eager SDPA tower')}\n", ""
    )
    assert dl101(make_tree, {MODEL: undeclared}) == [f"8:16: {_undeclared('VisionAttention.forward')}"]


def test_an_encoder_free_subclass_of_a_configurable_model_changes_nothing(make_tree: MakeTree) -> None:
    configurable = FIXED_BASE.replace(
        "FixedEncoderAttention('eager SDPA tower')", '("VANILLA", "TRTLLM", "FLASHINFER")'
    )
    subclass = "from .modeling_probe import ProbeVLModel\n\nclass ProbeTextModel(ProbeVLModel):\n"
    subclass += "    encoder_attention_backends = {}\n"
    assert dl101(make_tree, {MODEL: configurable, TEXT: subclass}) == [f"8:16: {_bypass('VisionAttention.forward')}"]


def test_a_tower_owned_only_by_an_encoder_free_model_is_undeclared(make_tree: MakeTree) -> None:
    source = FIXED_BASE.replace("{'vision': FixedEncoderAttention('eager SDPA tower')}", "{}")
    assert dl101(make_tree, {MODEL: source}) == [f"8:16: {_undeclared('VisionAttention.forward')}"]


# ---- which encoder a tower belongs to -----------------------------------------------------------

# A model with a configurable vision encoder and a fixed audio one; the SigLIP tower is reached
# through a class holding both towers (as Phi-4-MM's `ImageAudioEmbedding` does).
TWO_ENCODERS = HEADER + (
    "\nclass PeSiglipAttention(nn.Module):\n"  # 6
    "    def forward(self, q, k, v):\n"
    "        return F.scaled_dot_product_attention(q, k, v)\n"  # 8
    "\nclass PeImageEmbedding(nn.Module):\n"
    "    def __init__(self):\n"
    "        self.attn = PeSiglipAttention()\n"
    "\nclass PeImageAudioEmbedding(nn.Module):\n"
    "    def __init__(self):\n"
    "        self.image_embed = PeImageEmbedding()\n"
    "\n@register_input_processor(object, model_type='probe', placeholder_metadata="
    "MultimodalPlaceholderMetadata(placeholder_map={'image': '<i>', 'audio': '<a>'}))\n"
    "class ProbeVLModel(MultimodalModelMixin, nn.Module):\n"
    "    encoder_attention_backends = {'vision': ('VANILLA', 'TRTLLM', 'FLASHINFER'), "
    "'audio': FixedEncoderAttention('relative-position bias')}\n\n"
    "    def __init__(self):\n"
    "        self.embed = PeImageAudioEmbedding()\n"
)


def test_the_nearest_class_hinting_at_an_encoder_decides(make_tree: MakeTree) -> None:
    """The holder's name hints at both encoders: the tower's own name (SigLIP, vision) decides.
    The audio hint of the holder had credited the call to the fixed audio encoder: no finding."""
    assert dl101(make_tree, {MODEL: TWO_ENCODERS}) == [f"8:16: {_bypass('PeSiglipAttention.forward')}"]
    # Named after neither encoder, the tower goes by the next class up that names one.
    plain = TWO_ENCODERS.replace("PeSiglipAttention", "PeAttention")
    assert dl101(make_tree, {MODEL: plain}) == [f"8:16: {_bypass('PeAttention.forward')}"]
    # A tower whose own name says audio is the fixed audio encoder's: nothing to report.
    audio = TWO_ENCODERS.replace("PeSiglipAttention", "PeConformerAttention")
    assert dl101(make_tree, {MODEL: audio}) == []


def test_a_model_with_one_encoder_owns_every_tower_whatever_its_name(make_tree: MakeTree) -> None:
    """An image-only model's tower named like audio is still its vision encoder's."""
    source = FIXED_BASE.replace("VisionAttention", "SpeechLikeAttention").replace(
        "FixedEncoderAttention('eager SDPA tower')", '("VANILLA", "TRTLLM", "FLASHINFER")'
    )
    assert dl101(make_tree, {MODEL: source}) == [f"8:16: {_bypass('SpeechLikeAttention.forward')}"]


# ---- owners through module-level values (a registry of towers) ----------------------------------

REGISTRY_TOWER = HEADER + (
    "\nclass PcSiglipTower(nn.Module):\n"  # 6
    "    def forward(self, q, k, v):\n"
    "        return F.scaled_dot_product_attention(q, k, v)\n"  # 8
)


def _registry_model(value: str, vision: str = "FixedEncoderAttention('HF SDPA towers')") -> str:
    """A model that builds its tower through the module-level `_VISION_TOWERS = value`."""
    return (
        f"\n_VISION_TOWERS = {value}\n"
        "\n@register_input_processor(object, model_type='probe', placeholder_metadata="
        "MultimodalPlaceholderMetadata(placeholder_map={'image': '<i>'}))\n"
        "class ProbeVLModel(MultimodalModelMixin, nn.Module):\n"
        f"    encoder_attention_backends = {{'vision': {vision}}}\n\n"
        "    def __init__(self, config):\n"
        "        self.tower = _VISION_TOWERS[config.vision_tower_type](config)\n"
    )


CONFIGURABLE = '("VANILLA", "TRTLLM", "FLASHINFER")'


def test_a_tower_in_a_module_level_registry_is_the_models(make_tree: MakeTree) -> None:
    """The registry was a dead end of the reference graph: the fixed tower read 'no model declares'."""
    registry = _registry_model("{'siglip': PcSiglipTower}")
    assert dl101(make_tree, {MODEL: REGISTRY_TOWER + registry}) == []
    configurable = _registry_model("{'siglip': PcSiglipTower}", vision=CONFIGURABLE)
    assert dl101(make_tree, {MODEL: REGISTRY_TOWER + configurable}) == [f"8:16: {_bypass('PcSiglipTower.forward')}"]


def test_lists_tuples_sets_conditionals_and_aliases_of_towers_are_followed(make_tree: MakeTree) -> None:
    for value in (
        "[PcSiglipTower]",
        "(PcSiglipTower, None)",
        "{PcSiglipTower}",
        "PcSiglipTower if True else None",
        "{**{'siglip': PcSiglipTower}}",
    ):
        source = REGISTRY_TOWER + _registry_model(value, vision=CONFIGURABLE)
        assert dl101(make_tree, {MODEL: source}) == [f"8:16: {_bypass('PcSiglipTower.forward')}"], value


def test_a_registry_built_from_another_module_level_value(make_tree: MakeTree) -> None:
    """Values lead to values: a registry merged from others, filled by item, or bound twice."""
    merged = REGISTRY_TOWER + "\n_BASE = {'siglip': PcSiglipTower}\n" + _registry_model("{**_BASE}")
    assert dl101(make_tree, {MODEL: merged}) == []
    filled = REGISTRY_TOWER + _registry_model("{}").replace(
        "_VISION_TOWERS = {}\n", "_VISION_TOWERS = {}\n_VISION_TOWERS['siglip'] = PcSiglipTower\n"
    )
    assert dl101(make_tree, {MODEL: filled}) == []
    twice = REGISTRY_TOWER + "\nif True:\n    _X = PcSiglipTower\nelse:\n    _X = None\n" + _registry_model("[_X]")
    assert dl101(make_tree, {MODEL: twice}) == []


def test_a_registry_imported_from_another_module(make_tree: MakeTree) -> None:
    towers = "tensorrt_llm/_torch/models/probe_towers.py"
    registry = "from .modeling_probe import PcSiglipTower\n\n_VISION_TOWERS = {'siglip': PcSiglipTower}\n"
    model = REGISTRY_TOWER + _registry_model("None").replace(
        "\n_VISION_TOWERS = None\n", "\nfrom .probe_towers import _VISION_TOWERS\n"
    )
    assert dl101(make_tree, {MODEL: model, towers: registry}) == []
    configurable = model.replace("FixedEncoderAttention('HF SDPA towers')", CONFIGURABLE)
    assert dl101(make_tree, {MODEL: configurable, towers: registry}) == [f"8:16: {_bypass('PcSiglipTower.forward')}"]


def test_a_module_level_value_that_names_no_tower_owns_nothing(make_tree: MakeTree) -> None:
    """A value that only names the model is no path from the model to the tower."""
    source = REGISTRY_TOWER + _registry_model("{'x': 1}") + "\n_MODELS = [ProbeVLModel]\n"
    assert dl101(make_tree, {MODEL: source}) == [f"8:16: {_undeclared('PcSiglipTower.forward')}"]


def test_a_walrus_expression_called_in_place_is_reported(make_tree: MakeTree) -> None:
    source = HEADER + (
        "\nclass VisionTower(nn.Module):\n"  # 6
        "    def forward(self, q, k, v):\n"
        "        return (fn := F.scaled_dot_product_attention)(q, k, v)\n"  # 8
        "\ndef encode(q, k, v):\n"
        "    return (fn := (F.scaled_dot_product_attention if q else None))(q, k, v)\n"  # 11
        "\ndef chained(q, k, v):\n"
        "    attn = (fn := F.scaled_dot_product_attention)\n"  # the walrus's value is the alias's
        "    return attn(q, k, v)\n"  # 15
    )
    assert dl101(make_tree, {MODEL: source + _model("VisionTower")}) == [
        f"8:16: {_bypass('VisionTower.forward')}",
        f"11:12: {_undeclared('encode')}",
        f"15:12: {_undeclared('chained')}",
    ]


def test_of_two_hints_in_one_name_the_last_decides(make_tree: MakeTree) -> None:
    """`ImageBindAudioEncoder` is an audio encoder (its head noun), `AudioVisualEncoder` a vision
    one; the first was credited to vision (a name hinting at two told nothing), a false DL101."""
    audio = TWO_ENCODERS.replace("PeSiglipAttention", "ImageBindAudioEncoder").replace(
        "self.image_embed = PeImageEmbedding()", "self.image_embed = ImageBindAudioEncoder()"
    )
    assert dl101(make_tree, {MODEL: audio}) == []
    vision = audio.replace("ImageBindAudioEncoder", "AudioVisualEncoder")
    assert dl101(make_tree, {MODEL: vision}) == [f"8:16: {_bypass('AudioVisualEncoder.forward')}"]
    # A hint inside a word is none: "Subdivision" holds "vision", the tower is the Conformer's.
    inside = audio.replace("ImageBindAudioEncoder", "ConformerSubdivisionAttention")
    assert dl101(make_tree, {MODEL: inside}) == []


def test_parakeet_names_the_audio_encoder_as_in_nemotron_nano(make_tree: MakeTree) -> None:
    """Nemotron Nano's audio tower is `ProjectedParakeet` holding `ParakeetEncoder` (and
    `HFParakeetEncoder`), declared fixed (relative-position bias): no default hint named it, the
    tower went to vision, declared configurable, and a false DL101 said the override was bypassed
    (red-team 48)."""
    for name in ("ParakeetRelPosAttention", "HFParakeetEncoder"):
        audio = TWO_ENCODERS.replace("PeSiglipAttention", name).replace("PeImageEmbedding", "ProjectedParakeet")
        audio = audio.replace("PeImageAudioEmbedding", "PeEmbeddings")
        assert dl101(make_tree, {MODEL: audio}) == []


LLM = "tensorrt_llm/_torch/models/modeling_probe_llm.py"
LANGUAGE_MODEL = (
    "import torch.nn.functional as F\n"
    "from torch import nn\n"
    "from .modeling_utils import register_auto_model\n"
    "\nclass ProbeDraftHead(nn.Module):\n"  # 5
    "    def forward(self, q, k, v):\n"
    "        return F.scaled_dot_product_attention(q, k, v, is_causal=True)\n"  # 7
    "\n@register_auto_model('ProbeForCausalLM')\n"
    "class ProbeForCausalLM(nn.Module):\n"
    "    def __init__(self):\n"
    "        self.draft_head = ProbeDraftHead()\n"
)


def test_a_language_models_own_code_is_no_encoders(make_tree: MakeTree) -> None:
    """A text model's draft head calling SDPA was "an encoder no model declares" (red-team 48):
    a class registered with register_auto_model and no multimodal model is a language model."""
    assert dl101(make_tree, {LLM: LANGUAGE_MODEL}, checked=LLM) == []
    # Not registered, the same code is an unowned encoder's, as before.
    plain = LANGUAGE_MODEL.replace("@register_auto_model('ProbeForCausalLM')\n", "")
    assert dl101(make_tree, {LLM: plain}, checked=LLM) == [f"7:16: {_undeclared('ProbeDraftHead.forward')}"]


def test_a_multimodal_model_does_not_own_the_language_model_it_wraps(make_tree: MakeTree) -> None:
    """`self.llm = ProbeForCausalLM()` in a configurable VLM credited the LLM's SDPA to the vision
    encoder, "override silently bypassed" (red-team 48); the VLM's own tower is still its."""
    tower = (
        "\nclass VisionTower(nn.Module):\n    def forward(self, q, k, v):\n"
        "        return F.scaled_dot_product_attention(q, k, v)\n"
    )
    vlm = (
        HEADER
        + "from .modeling_probe_llm import ProbeForCausalLM\n"
        + tower
        + _model("VisionTower", "ProbeForCausalLM")
    )
    files = {LLM: LANGUAGE_MODEL, MODEL: vlm}
    assert dl101(make_tree, files, checked=LLM) == []
    assert dl101(make_tree, files) == [f"9:16: {_bypass('VisionTower.forward')}"]
    # A class registered both ways is a multimodal model: it owns its towers, as before.
    both = vlm.replace("\n@register_input_processor", "\n@register_auto_model('ProbeVL')\n@register_input_processor")
    both = both.replace(
        "from .modeling_probe_llm import",
        "from .modeling_utils import register_auto_model\nfrom .modeling_probe_llm import",
    )
    assert dl101(make_tree, {LLM: LANGUAGE_MODEL, MODEL: both}) == [f"10:16: {_bypass('VisionTower.forward')}"]


def test_a_registered_vision_tower_is_no_language_model(make_tree: MakeTree) -> None:
    """TensorRT-LLM registers vision towers with register_auto_model too (`SiglipVisionModel`,
    `CLIPVisionModel`): taken for a language model, the configurable VLM's tower lost its
    DL101 (red-team 49). A registered class named after an encoder stays the encoder's."""
    tower = LANGUAGE_MODEL.replace("ProbeForCausalLM", "ProbeSiglipVisionModel")
    vlm = HEADER + "from .modeling_probe_llm import ProbeSiglipVisionModel\n" + _model("ProbeSiglipVisionModel")
    assert dl101(make_tree, {LLM: tower, MODEL: vlm}, checked=LLM) == [f"7:16: {_bypass('ProbeDraftHead.forward')}"]


def test_a_model_does_not_own_what_it_only_type_tests(make_tree: MakeTree) -> None:
    """A model that tests whether an object is another model or tower (`isinstance(x, Other)`,
    `isinstance(m, TOWERS)`, `type(x) in SUPPORTED`) does not own it: a fixed model's SDPA tower
    was reported bypassed through the configurable model testing for it. A subclass still owns
    its base model's towers, and a model that builds another model class owns that one's towers."""
    source = FIXED_BASE + (
        "\n@register_input_processor(object, model_type='other', placeholder_metadata="
        "MultimodalPlaceholderMetadata(placeholder_map={'image': '<image>'}))\n"
        "class OtherVLModel(MultimodalModelMixin, nn.Module):\n"
        "    encoder_attention_backends = {'vision': ('VANILLA', 'TRTLLM', 'FLASHINFER')}\n\n"
        "    def accepts(self, other):\n"
        "        return isinstance(other, ProbeVLModel) or type(other) in SUPPORTED or isinstance(other, TOWERS)\n\n"
        "SUPPORTED = [ProbeVLModel, OtherVLModel]\n"
        "TOWERS = (VisionAttention,)\n"
    )
    assert dl101(make_tree, {MODEL: source}) == []
    subclass = source + "\nclass ProbeChild(ProbeVLModel):\n    encoder_attention_backends = {'vision': ('TRTLLM',)}\n"
    composed = source.replace(
        "    def accepts(self, other):",
        "    def __init__(self):\n        self.inner = ProbeVLModel()\n\n    def accepts(self, other):",
    )
    bypassed = (
        "8:16: `VisionAttention.forward` calls torch.nn.functional.scaled_dot_product_attention directly, but "
        "{} declares its vision encoder configurable ({}): an encoder_attention_backend override is "
        "silently bypassed; route the call through the attention backend or declare the encoder "
        "FixedEncoderAttention(reason)"
    )
    assert dl101(make_tree, {MODEL: subclass}) == [bypassed.format("ProbeChild", "TRTLLM")]
    assert dl101(make_tree, {MODEL: composed}) == [bypassed.format("OtherVLModel", "VANILLA, TRTLLM, FLASHINFER")]


def test_a_type_test_that_builds_a_tower_still_owns_it(make_tree: MakeTree) -> None:
    """A walrus inside a comparison builds (`(tower := VisionAttention()) is not None`): its tower
    is owned, while the classes a test only names are not (a `case Tower():` pattern is one)."""
    built = FIXED_BASE.replace(
        "        self.tower = VisionAttention()\n",
        "        if (tower := VisionAttention()) is not None:\n            self.tower = tower\n",
    )
    assert dl101(make_tree, {MODEL: built}) == []
    matched = FIXED_BASE + (
        "\n@register_input_processor(object, model_type='other', placeholder_metadata="
        "MultimodalPlaceholderMetadata(placeholder_map={'image': '<image>'}))\n"
        "class OtherVLModel(MultimodalModelMixin, nn.Module):\n"
        "    encoder_attention_backends = {'vision': ('VANILLA', 'TRTLLM', 'FLASHINFER')}\n\n"
        "    def accepts(self, other):\n"
        "        match other:\n"
        "            case VisionAttention():\n"
        "                return True\n"
        "        return False\n"
    )
    assert dl101(make_tree, {MODEL: matched}) == []


# ---- an alias defined in another module of the project and imported ------------------------

UTILS = "tensorrt_llm/_torch/models/attn_utils.py"
ALIASES = (
    "import functools\n"
    "import torch.nn.functional as F\n\n"
    "sdpa = F.scaled_dot_product_attention\n"
    "causal_sdpa = functools.partial(F.scaled_dot_product_attention, is_causal=True)\n"
)


def _importing(imports: str, *calls: str) -> str:
    """The probe model's file: `imports` (one line) after the header, a tower making `calls`
    (lines 9 on), and the configurable model owning the tower."""
    body = "".join(f"        {call}\n" for call in calls)
    source = HEADER + imports + "\nclass VisionTower(nn.Module):\n    def forward(self, q, k, v):\n" + body
    return source + _model("VisionTower")


def test_an_imported_alias_of_sdpa_is_reported(make_tree: MakeTree) -> None:
    model = _importing("from .attn_utils import sdpa\n", "return sdpa(q, k, v)")
    assert dl101(make_tree, {UTILS: ALIASES, MODEL: model}) == [f"9:16: {_bypass('VisionTower.forward')}"]


def test_an_imported_partial_of_sdpa_is_reported(make_tree: MakeTree) -> None:
    model = _importing("from .attn_utils import causal_sdpa as attend\n", "return attend(q, k, v)")
    assert dl101(make_tree, {UTILS: ALIASES, MODEL: model}) == [f"9:16: {_bypass('VisionTower.forward')}"]


def test_an_alias_read_through_its_module_is_reported(make_tree: MakeTree) -> None:
    model = _importing(
        "from . import attn_utils\n", "out = attn_utils.sdpa(q, k, v)", "return attn_utils.causal_sdpa(q, k, v)"
    )
    assert dl101(make_tree, {UTILS: ALIASES, MODEL: model}) == [
        f"9:15: {_bypass('VisionTower.forward')}",
        f"10:16: {_bypass('VisionTower.forward')}",
    ]


def test_an_imported_alias_in_a_tower_file_of_its_own_is_reported(make_tree: MakeTree) -> None:
    """The tower's file holds neither SDPA's name nor a model: only the alias's name says it may
    call SDPA (a needle the index gives), and the model owning it is in another file."""
    tower = "tensorrt_llm/_torch/models/probe_tower.py"
    tower_source = (
        "from torch import nn\nfrom .attn_utils import sdpa\n\n"
        "class VisionTower(nn.Module):\n    def forward(self, q, k, v):\n        return sdpa(q, k, v)\n"
    )
    model = HEADER + "from .probe_tower import VisionTower\n" + _model("VisionTower")
    assert dl101(make_tree, {UTILS: ALIASES, tower: tower_source, MODEL: model}, checked=tower) == [
        f"6:16: {_bypass('VisionTower.forward')}"
    ]


def test_a_tower_in_a_namespace_package_is_owned_through_its_import(make_tree: MakeTree) -> None:
    """PEP 420: `vision/` has no __init__.py (as TensorRT-LLM's `checkpoints/hf/` has none), and
    `from tensorrt_llm._torch.models.vision.tower import VisionTower` still imports it. declint
    named the module `tower`, the import resolved to nothing, and the call went unreported."""
    tower = "tensorrt_llm/_torch/models/vision/tower.py"
    tower_source = (
        "import torch.nn.functional as F\nfrom torch import nn\n\n"
        "class VisionTower(nn.Module):\n    def forward(self, q, k, v):\n"
        "        return F.scaled_dot_product_attention(q, k, v)\n"
    )
    model = HEADER + "from tensorrt_llm._torch.models.vision.tower import VisionTower\n" + _model("VisionTower")
    assert dl101(make_tree, {tower: tower_source, MODEL: model}, checked=tower) == [
        f"6:16: {_bypass('VisionTower.forward')}"
    ]


def test_a_tower_built_through_a_plain_import_of_its_module_is_owned(make_tree: MakeTree) -> None:
    """`import pkg.probe_tower` binds only `pkg`: the model's `pkg.probe_tower.VisionTower()` was
    recorded as a reference to `pkg._torch`, the tower was owned by no model, and its call read
    "no model declares" instead of the configurable declaration it bypasses."""
    tower = "tensorrt_llm/_torch/models/probe_tower.py"
    tower_source = (
        "import torch.nn.functional as F\nfrom torch import nn\n\n"
        "class VisionTower(nn.Module):\n    def forward(self, q, k, v):\n"
        "        return F.scaled_dot_product_attention(q, k, v)\n"
    )
    module = "tensorrt_llm._torch.models.probe_tower"
    model = HEADER + f"import {module}\n" + _model(f"{module}.VisionTower")
    assert dl101(make_tree, {tower: tower_source, MODEL: model}, checked=tower) == [
        f"6:16: {_bypass('VisionTower.forward')}"
    ]


def test_a_module_shadowed_by_a_package_of_its_name_is_owned_by_no_model(make_tree: MakeTree) -> None:
    """`towers.py` beside the package `towers/`: Python imports the package, and the model owns
    its VisionTower; the module's own VisionTower (dead code, the same qualified name) was
    blamed on the configurable declaration (red-team 49)."""
    sdpa_tower = (
        "import torch.nn.functional as F\n\nclass VisionTower:\n    def forward(self, q, k, v):\n"
        "        return F.scaled_dot_product_attention(q, k, v)\n"
    )
    clean_tower = "class VisionTower:\n    def forward(self, q, k, v):\n        return self.attn(q, k, v)\n"
    shadowed = "tensorrt_llm/_torch/models/towers.py"
    files = {
        shadowed: sdpa_tower,
        "tensorrt_llm/_torch/models/towers/__init__.py": clean_tower,
        MODEL: HEADER + "from .towers import VisionTower\n" + _model("VisionTower"),
    }
    assert dl101(make_tree, files, checked=shadowed) == [f"5:16: {_undeclared('VisionTower.forward')}"]


def test_an_imported_name_that_is_no_alias_of_sdpa_is_not_reported(make_tree: MakeTree) -> None:
    """Names of the alias module that are something else, and a function called `sdpa` of
    another module: the index resolves each import to what it is bound to."""
    utils = ALIASES + (
        "softmax = F.softmax\n"
        "ATTENTION = {'sdpa': F.scaled_dot_product_attention}\n\n"
        "def eager(q, k, v):\n    return q\n"
    )
    model = _importing(
        "from .attn_utils import ATTENTION, eager, sdpa as _unused, softmax\n",
        "return softmax(q), eager(q, k, v), ATTENTION['sdpa'](q, k, v)",
    )
    assert dl101(make_tree, {UTILS: utils, MODEL: model}) == []
    wrapper = "tensorrt_llm/_torch/models/eager_utils.py"
    other = _importing("from .eager_utils import sdpa\n", "return sdpa(q, k, v)")
    assert dl101(make_tree, {UTILS: ALIASES, wrapper: "def sdpa(q, k, v):\n    return q\n", MODEL: other}) == []


def test_an_alias_re_exported_by_another_module_is_reported(make_tree: MakeTree) -> None:
    """`utils` re-exports the aliases (by name and by `*`); its bytes name neither SDPA nor a
    model, so the index learns of it when the rule asks (and checks the file again)."""
    reexported = "tensorrt_llm/_torch/models/probe_utils.py"
    model = _importing("from .probe_utils import causal_sdpa, sdpa\n", "return sdpa(q, k, v), causal_sdpa(q, k, v)")
    expected = [f"9:16: {_bypass('VisionTower.forward')}", f"9:31: {_bypass('VisionTower.forward')}"]
    by_name = "from .attn_utils import causal_sdpa, sdpa\n"
    assert dl101(make_tree, {UTILS: ALIASES, reexported: by_name, MODEL: model}) == expected
    starred = "from .attn_utils import *\n"
    assert dl101(make_tree, {UTILS: ALIASES, reexported: starred, MODEL: model}) == expected


def test_an_alias_re_exported_under_another_name_is_reported(make_tree: MakeTree) -> None:
    """A module of the project re-exports the alias under a name of its own (`from .attn_utils
    import sdpa as attention`, or a package's `__init__.py` doing so), and the tower imports that
    name: the name is none that a module binds to SDPA directly, and was never asked of the index."""
    layers = "tensorrt_llm/_torch/models/probe_layers.py"
    model = _importing("from .probe_layers import attention\n", "return attention(q, k, v)")
    expected = [f"9:16: {_bypass('VisionTower.forward')}"]
    renamed = "from .attn_utils import sdpa as attention\n"
    assert dl101(make_tree, {UTILS: ALIASES, layers: renamed, MODEL: model}) == expected
    assigned = "from . import attn_utils\n\nattention = attn_utils.causal_sdpa\n"
    assert dl101(make_tree, {UTILS: ALIASES, layers: assigned, MODEL: model}) == expected


def test_an_alias_renamed_by_a_package_and_a_star_import_is_reported(make_tree: MakeTree) -> None:
    """`utils/__init__.py` renames the alias its submodule binds, and `probe_layers` brings the
    new name by `*`: a re-export under another name, then one by star, from outside the models
    package."""
    files = {
        "tensorrt_llm/_torch/utils/__init__.py": "from .attn import sdpa as attention_fn\n",
        "tensorrt_llm/_torch/utils/attn.py": "from torch.nn.functional import scaled_dot_product_attention as sdpa\n",
        "tensorrt_llm/_torch/models/probe_layers.py": "from ..utils import *\n",
        MODEL: _importing("from .probe_layers import attention_fn as attend\n", "return attend(q, k, v)"),
    }
    assert dl101(make_tree, files) == [f"9:16: {_bypass('VisionTower.forward')}"]


def test_a_function_re_exported_under_another_name_is_no_alias(make_tree: MakeTree) -> None:
    """A renamed re-export of a function that only shares the alias's name is not SDPA."""
    eager = "tensorrt_llm/_torch/models/eager_utils.py"
    layers = "tensorrt_llm/_torch/models/probe_layers.py"
    model = _importing("from .probe_layers import attention\n", "return attention(q, k, v)")
    files = {
        UTILS: ALIASES,
        eager: "def sdpa(q, k, v):\n    return q\n",
        layers: "from .eager_utils import sdpa as attention\n",
        MODEL: model,
    }
    assert dl101(make_tree, files) == []


PROBE_LAYERS = "tensorrt_llm._torch.models.probe_layers"


@pytest.mark.parametrize(
    "layers",
    ["from .attn_utils import sdpa as attention\n", "from . import attn_utils\n\nattention = attn_utils.causal_sdpa\n"],
    ids=["renamed", "assigned"],
)
@pytest.mark.parametrize(
    ("imports", "call"),
    [
        (f"import {PROBE_LAYERS}\n", f"return {PROBE_LAYERS}.attention(q, k, v)"),
        (f"import {PROBE_LAYERS} as layers\n", "return layers.attention(q, k, v)"),
    ],
    ids=["plain-import", "import-as"],
)
def test_a_renamed_re_export_called_through_its_module_is_reported(
    make_tree: MakeTree, layers: str, imports: str, call: str
) -> None:
    """Red-team: `probe_layers` re-exports the alias under a name of its own, and the tower reads
    it as an attribute of the module, imported whole (`import pkg.mod`, the call naming the
    dotted path, or `import pkg.mod as m`)."""
    model = _importing(imports, call)
    expected = [f"9:16: {_bypass('VisionTower.forward')}"]
    assert dl101(make_tree, {UTILS: ALIASES, "tensorrt_llm/_torch/models/probe_layers.py": layers, MODEL: model}) == (
        expected
    )


@pytest.mark.parametrize(
    "module", ["tensorrt_llm._torch.models.attn_utils", PROBE_LAYERS], ids=["binding-module", "re-exporting-module"]
)
def test_an_alias_under_its_own_name_called_through_a_plain_import_is_reported(
    make_tree: MakeTree, module: str
) -> None:
    """`import pkg.mod` then `pkg.mod.sdpa(...)`: the module binding the alias, or one
    re-exporting it by name."""
    model = _importing(f"import {module}\n", f"return {module}.sdpa(q, k, v)")
    layers = "from .attn_utils import sdpa\n"
    files = {UTILS: ALIASES, "tensorrt_llm/_torch/models/probe_layers.py": layers, MODEL: model}
    assert dl101(make_tree, files) == [f"9:16: {_bypass('VisionTower.forward')}"]


def test_a_renamed_function_called_through_a_plain_import_is_no_alias(make_tree: MakeTree) -> None:
    """`probe_layers` renames a function that only shares the alias's name: not SDPA, however
    the tower reaches it."""
    model = _importing(f"import {PROBE_LAYERS}\n", f"return {PROBE_LAYERS}.attention(q, k, v)")
    files = {
        UTILS: ALIASES,
        "tensorrt_llm/_torch/models/eager_utils.py": "def sdpa(q, k, v):\n    return q\n",
        "tensorrt_llm/_torch/models/probe_layers.py": "from .eager_utils import sdpa as attention\n",
        MODEL: model,
    }
    assert dl101(make_tree, files) == []


PROBE_PACKAGE = "tensorrt_llm/_torch/probe/__init__.py"


@pytest.mark.parametrize(
    "package",
    [
        "from ..models.attn_utils import sdpa as attention\n",
        "from ..models import attn_utils\n\nattention = attn_utils.causal_sdpa\n",
    ],
    ids=["renamed", "assigned"],
)
def test_a_package_above_a_plainly_imported_module_is_followed(make_tree: MakeTree, package: str) -> None:
    """`import a.b.c` imports the packages `a` and `a.b` too: the tower reads `a.b.attention`, an
    alias the package re-exports under a name of its own (red-team: only `a.b.c.x` was followed)."""
    model = _importing(
        "import tensorrt_llm._torch.probe.layers\n", "return tensorrt_llm._torch.probe.attention(q, k, v)"
    )
    files = {UTILS: ALIASES, PROBE_PACKAGE: package, "tensorrt_llm/_torch/probe/layers.py": "", MODEL: model}
    assert dl101(make_tree, files) == [f"9:16: {_bypass('VisionTower.forward')}"]


def test_a_tower_built_from_a_package_above_a_plainly_imported_module_is_owned(make_tree: MakeTree) -> None:
    """`import a.b.c`, then `a.b.VisionTower()`: the package's tower is the model's."""
    tower_source = (
        "import torch.nn.functional as F\nfrom torch import nn\n\n"
        "class VisionTower(nn.Module):\n    def forward(self, q, k, v):\n"
        "        return F.scaled_dot_product_attention(q, k, v)\n"
    )
    files = {
        PROBE_PACKAGE: tower_source,
        "tensorrt_llm/_torch/probe/layers.py": "",
        MODEL: HEADER + "import tensorrt_llm._torch.probe.layers\n" + _model("tensorrt_llm._torch.probe.VisionTower"),
    }
    assert dl101(make_tree, files, checked=PROBE_PACKAGE) == [f"6:16: {_bypass('VisionTower.forward')}"]


LAYERS = "tensorrt_llm/_torch/models/probe_layers.py"
OTHER = "tensorrt_llm/_torch/models/other.py"
EAGER = "def eager(q, k, v):\n    return q\n"


@pytest.mark.parametrize(
    ("layers", "imported"),
    [
        ("from .attn_utils import sdpa as attention\n\nattention = len\n", "attention"),
        ("from .attn_utils import sdpa as attention\nfrom . import other\n\nattention = other.eager\n", "attention"),
        ("from .attn_utils import sdpa\n\nsdpa = len\n", "sdpa"),
        ("from .attn_utils import sdpa as attention\n\nattention: object = len\n", "attention"),
        ("from .attn_utils import sdpa as attention\n\nattention, other = len, max\n", "attention"),
        ("from .attn_utils import sdpa as attention\n\nclass attention:\n    pass\n", "attention"),
        ("from .attn_utils import sdpa as attention\n\ndel attention\n", "attention"),
    ],
    ids=["assigned", "aliased", "same-name", "annotated", "unpacked", "class", "deleted"],
)
def test_an_imported_alias_rebound_at_module_level_is_no_alias(make_tree: MakeTree, layers: str, imported: str) -> None:
    """Red-team 101: `probe_layers` imports the alias, then rebinds the name at module level (a
    plain, annotated or unpacking assignment, a class, `del`): Python runs the module top to
    bottom, so what another module imports is the last binding, no alias of SDPA. The index
    followed the import and ignored the assignment (`from .attn_utils import *` was right)."""
    model = _importing(f"from .probe_layers import {imported}\n", f"return {imported}(q, k, v)")
    assert dl101(make_tree, {UTILS: ALIASES, OTHER: EAGER, LAYERS: layers, MODEL: model}) == []


@pytest.mark.parametrize(
    "layers",
    [
        "from .attn_utils import sdpa as attention\n\nif DEBUG:\n    attention = len\n",
        "try:\n    from .attn_utils import sdpa as attention\nexcept ImportError:\n    attention = len\n",
        "from .attn_utils import sdpa as attention\n\nwith open(PATH):\n    attention = len\n",
        "attention = len\n\nif FAST:\n    from .attn_utils import sdpa as attention\n",
        "attention = len\n\nfrom .attn_utils import sdpa as attention\n",
        "from . import other\n\nattention = other.eager\n\nfrom .attn_utils import sdpa as attention\n",
    ],
    ids=["rebound-if", "rebound-except", "rebound-with", "imported-in-if", "imported-last", "imported-after-alias"],
)
def test_an_imported_alias_maybe_rebound_or_imported_last_is_reported(make_tree: MakeTree, layers: str) -> None:
    """A rebinding in a module-level `if`, `try` or `with` may not run: the name may still be
    SDPA (an over-approximation, as a flow-insensitive reading is), so the call is reported; and
    an import that comes after the rebinding is the module's binding."""
    model = _importing("from .probe_layers import attention\n", "return attention(q, k, v)")
    files = {UTILS: ALIASES, OTHER: EAGER, LAYERS: layers, MODEL: model}
    assert dl101(make_tree, files) == [f"9:16: {_bypass('VisionTower.forward')}"]


@pytest.mark.parametrize(
    "nested",
    [
        "def reference(q, k, v):\n    from .attn_utils import sdpa as attention\n    return attention(q, k, v)\n",
        "class Reference:\n    from .attn_utils import sdpa as attention\n\n    def run(self, q, k, v):\n"
        "        return self.attention(q, k, v)\n",
    ],
    ids=["function", "class"],
)
def test_an_import_in_a_function_or_class_body_is_no_module_binding(make_tree: MakeTree, nested: str) -> None:
    """Red-team 101: `probe_layers` binds `attention` to `other.eager` at module level and imports
    the alias under that name inside a function (or a class body): what the model imports is
    `eager`. The facts took imports from the whole tree, a nested one overwriting the module's.
    The call inside the function is SDPA, reported in its own file (no model owns it); a class
    attribute bound by an import is no alias DL101 follows (`self.attention`), as before."""
    layers = "from .other import eager as attention\n\n" + nested
    model = _importing("from .probe_layers import attention\n", "return attention(q, k, v)")
    files = {UTILS: ALIASES, OTHER: EAGER, LAYERS: layers, MODEL: model}
    assert dl101(make_tree, files) == []
    if nested.startswith("def"):
        assert dl101(make_tree, files, checked=LAYERS) == [f"5:12: {_undeclared('reference')}"]


def test_an_alias_imported_and_rebound_in_one_file(make_tree: MakeTree) -> None:
    """The same file imports SDPA under a name, then rebinds the name at module level: a function
    calling it calls the last binding (it runs after the module has run); module-level code
    before the rebinding still calls SDPA."""
    source = (
        HEADER
        + (
            "from torch.nn.functional import scaled_dot_product_attention as attention\n"  # 5
            "\nWARM = attention(1, 2, 3)\n"  # 7: reported (module-level code, before the rebinding)
            "attention = len\n"
            "LATE = attention([])\n"  # 9: after it
            "\nclass VisionTower(nn.Module):\n    def forward(self, q, k, v):\n"
            "        return attention(q, k, v)\n"  # 13
        )
        + _model("VisionTower")
    )
    warm = _undeclared("").replace("`` calls", "module-level code calls")
    assert dl101(make_tree, {MODEL: source}) == [f"7:8: {warm}"]


@pytest.mark.parametrize(
    ("source", "indexed"),
    [
        (b"import torch.nn.functional as F\nsdpa = F.scaled_dot_product_attention\n", True),
        (b"sdpa: Callable = torch.nn.functional.scaled_dot_product_attention\n", True),
        (b"sdpa = functools.partial(\n    F.scaled_dot_product_attention,\n    scale=1.0,\n)\n", True),
        (b"from torch.nn.functional import scaled_dot_product_attention as sdpa\n", True),
        (b"from torch.nn.functional import (\n    scaled_dot_product_attention as sdpa,\n)\n", True),
        # Only calls (the 20 transformers files naming SDPA): nothing another module could import.
        (b"def f(q, k, v):\n    return F.scaled_dot_product_attention(q, k, v)\n", False),
        (b"x = 1\nclass A:\n    sdpa = F.scaled_dot_product_attention\n", False),
        (b"if x == F.scaled_dot_product_attention:\n    pass\n", False),
        (b"OTHER = F.scaled_dot_product_attention_v2\n", False),
    ],
    ids=["alias", "annotated", "partial", "import-as", "import-as-parenthesized", "calls", "class", "compare", "other"],
)
def test_a_file_naming_sdpa_is_indexed_only_when_it_may_bind_an_alias(source: bytes, indexed: bool) -> None:
    config = load_config(None, default_root=Path("/nonexistent"), known_codes=frozenset(RULES_BY_CODE))
    assert DirectSdpa.indexes(source, config) is indexed


def test_an_alias_re_exported_through_two_star_imports_is_reported(make_tree: MakeTree) -> None:
    """`r2` does `from .r1 import *` and `r1` does `from .attn_utils import *` (red-team 44: a chain
    of two stars was not followed, one was)."""
    first = "tensorrt_llm/_torch/models/probe_r1.py"
    second = "tensorrt_llm/_torch/models/probe_r2.py"
    model = _importing("from .probe_r2 import sdpa, causal_sdpa\n", "out = sdpa(q, k, v)", "return causal_sdpa(q)")
    tree = {UTILS: ALIASES, first: "from .attn_utils import *\n", second: "from .probe_r1 import *\n", MODEL: model}
    assert dl101(make_tree, tree) == [
        f"9:15: {_bypass('VisionTower.forward')}",
        f"10:16: {_bypass('VisionTower.forward')}",
    ]


@pytest.mark.parametrize(
    ("layers", "bound", "read"),
    [
        ((("attention", "pkg.attn_utils.sdpa"),), ("attention", "sdpa"), True),
        ((("attention", "pkg.eager.sdpa"),), ("sdpa",), False),
        ((), ("sdpa",), False),
    ],
    ids=["renamed-alias", "renamed-other-function", "no-re-export"],
)
def test_a_file_calling_a_renamed_alias_passes_the_prefilter_only_when_one_exists(
    layers: tuple[tuple[str, str], ...], bound: tuple[str, ...], read: bool
) -> None:
    """The file names `attention`, never SDPA: it passes DL101's prefilter because the index
    knows a module binding that name to an alias of SDPA, and only then."""
    from declint.facts import ModuleFacts
    from declint.index import ProjectIndex

    config = load_config(None, default_root=Path("/nonexistent"), known_codes=frozenset(RULES_BY_CODE))
    facts = [
        ModuleFacts("pkg.attn_utils", "pkg/attn_utils.py", imports=(("sdpa", SDPA),)),
        ModuleFacts("pkg.layers", "pkg/layers.py", imports=layers),
    ]
    index = ProjectIndex.build(facts, config)
    assert index.names_bound_to((SDPA,)) == bound
    data = b"from pkg.layers import attention\n\ndef f(q, k, v):\n    return attention(q, k, v)\n"
    assert DirectSdpa.prefilter(data, config, index) is read


def test_modules_star_importing_each_other_are_each_looked_into_once() -> None:
    """Red-team 45: eight modules each star-importing the seven others, none binding `sdpa`; the
    search for it looked into each module once per path through them (8.2 s for the check)."""
    from declint.config import load_config as load
    from declint.facts import ModuleFacts
    from declint.index import ProjectIndex

    names = [f"pkg.s{i}" for i in range(8)]
    facts = [
        ModuleFacts(name, name.replace(".", "/") + ".py", star_imports=tuple(n for n in names if n != name))
        for name in names
    ]
    index = ProjectIndex.build(facts, load(None, default_root=Path("/nonexistent"), known_codes=frozenset()))
    looked: list[str] = []
    real = index.modules.get
    index.modules = type(
        "Counting", (dict,), {"get": lambda self, key, default=None: looked.append(key) or real(key, default)}
    )(index.modules)
    assert index.resolve_callable("pkg.s0.sdpa") == "pkg.s0.sdpa"
    # Each star-imported name is followed at most once per number of hops left (8 x 8), a lookup or
    # two each, and each module once by the alias search: 960,864 lookups before.
    assert len(looked) <= 2 * 8 * 8 + 8


# ---- a tower built on a Hugging Face model (its attention is its own) ---------------------------

HF_TOWER = (
    "from transformers import AutoModel\n"
    "from torch import nn\n\n"
    "class EdgeSiglipTower(nn.Module):\n"
    "    def __init__(self, config):\n"
    "        self.model = AutoModel.from_config(config.vision_config, attn_implementation='sdpa')\n"  # 6
)
TOWER_FILE = "tensorrt_llm/_torch/models/edge_tower.py"


def _hf_bypass(scope: str, built: str = "transformers.AutoModel.from_config") -> str:
    return (
        f"`{scope}` builds a Hugging Face model ({built}), whose attention never reaches the attention backend, "
        "but ProbeVLModel declares its vision encoder configurable (VANILLA, TRTLLM, FLASHINFER): an "
        "encoder_attention_backend override is silently ignored; build the encoder on TensorRT-LLM's attention "
        "or declare it FixedEncoderAttention(reason)"
    )


def test_a_hugging_face_tower_under_a_configurable_declaration_is_reported(make_tree: MakeTree) -> None:
    """Mission failure 1 as Cosmos3 Edge had it: a tower swapped for a Hugging Face model under an
    inherited configurable declaration accepted an override and ignored it (red-team 48: "All
    clear"). Under a fixed declaration, or owned by no model, it is fine."""
    model = HEADER + "from .edge_tower import EdgeSiglipTower\n" + _model("EdgeSiglipTower")
    files = {TOWER_FILE: HF_TOWER, MODEL: model}
    assert dl101(make_tree, files, checked=TOWER_FILE) == [f"6:22: {_hf_bypass('EdgeSiglipTower.__init__')}"]
    fixed = _model("EdgeSiglipTower", vision="FixedEncoderAttention('Hugging Face SigLIP')")
    assert (
        dl101(
            make_tree,
            {TOWER_FILE: HF_TOWER, MODEL: model.replace(_model("EdgeSiglipTower"), fixed)},
            checked=TOWER_FILE,
        )
        == []
    )
    assert dl101(make_tree, {TOWER_FILE: HF_TOWER}, checked=TOWER_FILE) == []


def test_a_subclass_swapping_its_tower_for_a_hugging_face_one_is_reported(make_tree: MakeTree) -> None:
    """The subclass keeps its base's configurable declaration and names another tower class."""
    base = HEADER + (
        "\nclass VisionTower(nn.Module):\n    pass\n"
        "\n@register_input_processor(object, model_type='probe', placeholder_metadata="
        "MultimodalPlaceholderMetadata(placeholder_map={'image': '<image>'}))\n"
        "class ProbeVLModel(MultimodalModelMixin, nn.Module):\n"
        "    encoder_attention_backends = {'vision': ('VANILLA', 'TRTLLM', 'FLASHINFER')}\n"
        "    tower_cls = VisionTower\n"
    )
    edge = (
        "from .modeling_probe import ProbeVLModel\nfrom .edge_tower import EdgeSiglipTower\n\n"
        "class EdgeVL(ProbeVLModel):\n    tower_cls = EdgeSiglipTower\n"
    )
    files = {MODEL: base, "tensorrt_llm/_torch/models/modeling_edge.py": edge, TOWER_FILE: HF_TOWER}
    found = dl101(make_tree, files, checked=TOWER_FILE)
    assert found == [
        f"6:22: {_hf_bypass('EdgeSiglipTower.__init__').replace('ProbeVLModel declares', 'EdgeVL declares')}"
    ]


def test_only_a_hugging_face_encoder_model_a_module_keeps_is_reported(make_tree: MakeTree) -> None:
    """Red-team 51: every `transformers.Auto*.from_pretrained` was a model (AutoProcessor,
    AutoTokenizer, AutoConfig in the input processor: five false findings), so were the wrapped
    language model and a model loaded to read weights; and a tower built from its own class
    (`SiglipVisionModel(cfg)`, PaliGemma's way) was missed."""
    tower = (
        "from transformers import AutoConfig, AutoModel, AutoModelForCausalLM, AutoProcessor, SiglipVisionModel\n"
        "from transformers.models.siglip import modeling_siglip\n"
        "from torch import nn\n\n"
        "def load_weights(module, path):\n"
        "    reference = AutoModel.from_pretrained(path)\n"  # a local: weights only
        "    module.load_state_dict(reference.state_dict())\n\n"
        "class EdgeSiglipTower(nn.Module):\n"
        "    def __init__(self, config, path):\n"
        "        self.processor = AutoProcessor.from_pretrained(path)\n"  # 11
        "        self.hidden = AutoConfig.from_pretrained(path).hidden_size\n"
        "        self.llm = AutoModelForCausalLM.from_config(config.text_config)\n"
        "        self.direct = SiglipVisionModel(config.vision_config)\n"  # 14
        "        self.loaded = SiglipVisionModel.from_pretrained(path)\n"  # 15
        "        self.module = modeling_siglip.SiglipVisionModel(config.vision_config)\n"  # 16
        "        load_weights(self, path)\n"
        # red-team 53: LLaVA's language model through the generic AutoModel (by attribute or config)
        "        self.language_model = AutoModel.from_config(config.text_config)\n"
        "        self.text = AutoModel.from_config(config)\n"
        "        self.decoder = AutoModel.from_config(config.text_config)\n"
        "        self.tower = AutoModel.from_config(config.vision_config)\n"  # 21: still an encoder
        "        self.cast = AutoModel.from_config(config.vision_config).to(config.dtype).eval()\n"  # 22
        "        self.inner = SiglipVisionModel(config.vision_config).vision_model\n"  # 23
        "        self.vision_language_adapter = AutoModel.from_config(config.vision_config)\n"  # 24: its config decides
    )
    model = HEADER + "from .edge_tower import EdgeSiglipTower\n" + _model("EdgeSiglipTower")
    found = dl101(make_tree, {TOWER_FILE: tower, MODEL: model}, checked=TOWER_FILE)
    scope = "EdgeSiglipTower.__init__"
    assert found == [
        f"14:23: {_hf_bypass(scope, 'transformers.SiglipVisionModel')}",
        f"15:23: {_hf_bypass(scope, 'transformers.SiglipVisionModel.from_pretrained')}",
        f"16:23: {_hf_bypass(scope, 'transformers.models.siglip.modeling_siglip.SiglipVisionModel')}",
        f"21:22: {_hf_bypass(scope, 'transformers.AutoModel.from_config')}",
        f"22:21: {_hf_bypass(scope, 'transformers.AutoModel.from_config')}",
        f"23:22: {_hf_bypass(scope, 'transformers.SiglipVisionModel')}",
        f"24:40: {_hf_bypass(scope, 'transformers.AutoModel.from_config')}",
    ]


def test_tensorrt_llms_own_auto_model_is_no_hugging_face_model(make_tree: MakeTree) -> None:
    tower = HF_TOWER.replace("from transformers import AutoModel", "from .modeling_auto import AutoModel")
    model = HEADER + "from .edge_tower import EdgeSiglipTower\n" + _model("EdgeSiglipTower")
    assert dl101(make_tree, {TOWER_FILE: tower, MODEL: model}, checked=TOWER_FILE) == []


def test_reporting_an_unowned_call_indexes_no_file_in_full(make_tree: MakeTree) -> None:
    """5c3649a looked up the checked file's module in the index for every report: a placeholder
    read, and the engine then indexed the file in full (38 files of the transformers sources,
    +0.8 s cold). The lookup is asked only of code a model owns."""
    from declint.config import find_config_file
    from declint.engine import Engine, Selection
    from declint.rules import ALL_RULES

    plain = "tensorrt_llm/kernels/attend.py"
    source = (
        "import torch.nn.functional as F\n\n\ndef attend(q, k, v):\n"
        "    return F.scaled_dot_product_attention(q, k, v)\n"
    )
    root = make_tree({plain: source})
    config = load_config(find_config_file(root), default_root=root, known_codes=frozenset(RULES_BY_CODE))
    indexed = []
    for text in (source, source.replace("F.scaled_dot_product_attention(q, k, v)", "q")):
        (root / plain).write_text(text)
        engine = Engine(config, ALL_RULES, Selection(("DL101",), ()), cache=False)
        engine.run([root / plain])
        indexed.append(engine.stats.files_indexed)
    assert indexed[0] == indexed[1]  # the report indexed nothing more than the clean file's run
