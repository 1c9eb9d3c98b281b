"""Declaration and encoder forms found by red-teaming the rules on realistic TensorRT-LLM code
(DL100, DL102, DL104, DL106): each test fails on the code before its fix."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from declint.cli import cli
from tests.conftest import MakeTree

MODEL = "tensorrt_llm/_torch/models/"
LLM_ARGS = (
    "from typing import Literal\n\n"
    'EncoderAttentionBackend = Literal["VANILLA", "TRTLLM", "FLASHINFER"]\n'
    'MoeBackend = Literal["CUTLASS", "TRTLLM", "VANILLA", "DEEPGEMM"]\n'
    'BACKEND_TRTLLM: EncoderAttentionBackend = "TRTLLM"\n'
)
IMPORTS = (
    "from typing import get_args\n\n"
    "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin\n"
    "from tensorrt_llm._torch.models.modeling_utils import MultimodalPlaceholderMetadata, register_input_processor\n"
)


def check(*args: str) -> tuple[int, list[str]]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", *args])
    return result.exit_code, result.output.splitlines()


def registered(model_type: str, *modalities: str) -> str:
    placeholders = ", ".join(f'"{modality}": "<{modality}>"' for modality in modalities)
    return (
        f'@register_input_processor(object, model_type="{model_type}", '
        f"placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map={{{placeholders}}}))\n"
    )


def test_a_declaration_that_unpacks_its_base_is_dl104_alone_and_gets_no_dl102_fix(make_tree: MakeTree) -> None:
    """The unpacked mapping holds "vision": DL102 must not say it is missing, nor offer to declare
    it fixed (which would override the inherited configurable entry)."""
    source = (
        IMPORTS
        + "\n\n"
        + registered("base", "image")
        + 'class BaseModel(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("TRTLLM",)}\n\n\n'
        + registered("omni", "image", "audio")
        + "class OmniModel(BaseModel):\n"
        + "    encoder_attention_backends = {\n"
        + "        **BaseModel.encoder_attention_backends,\n"
        + '        "audio": FixedEncoderAttention("eager audio"),\n'
        + "    }\n"
    )
    root = make_tree({MODEL + "modeling_omni.py": source})
    code, lines = check(str(root))
    assert code == 1
    assert lines == [
        "tensorrt_llm/_torch/models/modeling_omni.py:15:9: DL104 encoder_attention_backends must not unpack "
        "other mappings (`**`)",
        "Found 1 finding in 15 files.",
    ]
    code, lines = check("--diff", "--unsafe-fixes", str(root))
    assert "OmniModel" not in "\n".join(lines)


def test_get_args_of_another_literal_is_dl104_and_an_invalid_row_of_the_table(make_tree: MakeTree) -> None:
    source = (
        "import typing\n\n"
        "from tensorrt_llm.llmapi import llm_args\n"
        "from tensorrt_llm.llmapi import EncoderAttentionBackend as Reexported\n"
        "from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend as Backends\n"
        "from tensorrt_llm.llmapi.llm_args import MoeBackend\n"
        + IMPORTS
        + "\n\nclass MoeModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": get_args(MoeBackend)}\n\n\n'
        "class AliasModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": typing.get_args(Backends)}\n\n\n'
        "class ModuleModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": get_args(llm_args.EncoderAttentionBackend)}\n\n\n'
        "class ReexportModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": get_args(Reexported)}\n'
    )
    root = make_tree(
        {
            "tensorrt_llm/llmapi/__init__.py": "from .llm_args import EncoderAttentionBackend\n",
            "tensorrt_llm/llmapi/llm_args.py": LLM_ARGS,
            MODEL + "modeling_literals.py": source,
        }
    )
    code, lines = check(str(root))
    assert (code, lines) == (
        1,
        [
            'tensorrt_llm/_torch/models/modeling_literals.py:14:45: DL104 encoder "vision": get_args must be '
            "given the shared Literal EncoderAttentionBackend, not MoeBackend",
            "Found 1 finding in 15 files.",
        ],
    )
    table = CliRunner().invoke(cli, ["table", str(root)]).output.splitlines()
    assert table[2:] == [
        "| AliasModel | vision | VANILLA, TRTLLM, FLASHINFER |  | TRTLLM |",
        "| ModuleModel | vision | VANILLA, TRTLLM, FLASHINFER |  | TRTLLM |",
        "| MoeModel | vision | invalid declaration |  | - |",
        "| ReexportModel | vision | VANILLA, TRTLLM, FLASHINFER |  | TRTLLM |",
    ]


def test_modalities_registered_through_a_module_constant_or_dict_call(make_tree: MakeTree) -> None:
    """`placeholder_metadata=_X_PLACEHOLDER_METADATA` (as TensorRT-LLM writes it) and
    `placeholder_map=dict(...)`: a forgotten audio encoder is still DL102; a constant that
    registers only images requires nothing more than vision."""
    source = (
        IMPORTS
        + "\n"
        + '_AUDIO_TOO = MultimodalPlaceholderMetadata(placeholder_map={"image": "<image>", "audio": "<audio>"})\n'
        + '_IMAGES = MultimodalPlaceholderMetadata(placeholder_map={"image": "<image>"})\n\n\n'
        + '@register_input_processor(object, model_type="a", placeholder_metadata=_AUDIO_TOO)\n'
        + 'class ConstantModel(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("TRTLLM",)}\n\n\n'
        + "@register_input_processor(\n"
        + '    object, model_type="b",\n'
        + '    placeholder_metadata=MultimodalPlaceholderMetadata(placeholder_map=dict(image="<i>", audio="<a>")),\n'
        + ")\n"
        + 'class DictModel(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("TRTLLM",)}\n\n\n'
        + '@register_input_processor(object, model_type="c", placeholder_metadata=_IMAGES)\n'
        + 'class ImagesModel(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("TRTLLM",)}\n'
    )
    root = make_tree({MODEL + "modeling_registered.py": source})
    code, lines = check(str(root))
    assert (code, lines) == (
        1,
        [
            'tensorrt_llm/_torch/models/modeling_registered.py:12:5: DL102 the declaration of "ConstantModel" '
            'misses encoder "audio" (registered modality "audio")',
            'tensorrt_llm/_torch/models/modeling_registered.py:20:5: DL102 the declaration of "DictModel" '
            'misses encoder "audio" (registered modality "audio")',
            "Found 2 findings in 15 files.",
        ],
    )


ENCODER_HEAD = (
    "import dataclasses\n\n"
    "from tensorrt_llm._torch.attention_backend.interface import AttentionMetadata\n"
    "from tensorrt_llm._torch.attention_backend.utils import get_attention_backend\n"
    "from tensorrt_llm._torch.modules.attention import Attention\n"
    "from tensorrt_llm.llmapi.llm_args import BACKEND_TRTLLM\n\n\n"
)


def encoder(name: str, *body: str) -> str:
    lines = "".join(f"        {line}\n" for line in body)
    return f"class {name}:\n    def __init__(self, model_config, encoder_backend):\n{lines}\n\n"


def test_dl106_follows_configs_kept_on_self_and_judges_pinned_layers_by_name(make_tree: MakeTree) -> None:
    source = ENCODER_HEAD + "".join(
        [
            encoder(  # the override kept on self: still the layers' config
                "OnSelf",
                "self.vision_config = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                "self.attn = Attention(config=self.vision_config)",
                "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata",
            ),
            encoder(  # the LLM's config read through self: still not the layers' config
                "ThroughSelf",
                "self.model_config = model_config",
                "vision_config = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                "self.attn = Attention(config=vision_config)",
                "self.metadata_cls = get_attention_backend(self.model_config.attn_backend).Metadata",
            ),
            encoder(  # both from the config kept on self: consistent
                "BothOnSelf",
                "self.vision_config = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                "self.attn = Attention(config=self.vision_config)",
                "self.metadata_cls = get_attention_backend(self.vision_config.attn_backend).Metadata",
            ),
            encoder(  # layers pinned with the Literal-typed constant, metadata class hard-coded: not judged
                "PinnedClass",
                "vision_config = dataclasses.replace(model_config, attn_backend=BACKEND_TRTLLM)",
                "self.attn = Attention(config=vision_config)",
                "self.metadata_cls = AttentionMetadata",
            ),
            encoder(  # layers pinned to TRTLLM (through the constant), metadata of VANILLA by name
                "PinnedElsewhere",
                "vision_config = dataclasses.replace(model_config, attn_backend=BACKEND_TRTLLM)",
                "self.attn = Attention(config=vision_config)",
                'self.metadata_cls = get_attention_backend("VANILLA").Metadata',
            ),
        ]
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, "tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:13:29: DL106 OnSelf takes its metadata class from model_config's "
        "attn_backend, but builds its attention layers from self.vision_config, whose attn_backend is overridden "
        "(line 11): with a per-encoder override the layers get metadata of another backend (AttributeError at the "
        "first forward); derive both from self.vision_config",
        "tensorrt_llm/_torch/models/encoders.py:21:29: DL106 ThroughSelf takes its metadata class from "
        "self.model_config's attn_backend, but builds its attention layers from vision_config, whose attn_backend "
        "is overridden (line 19): with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); derive both from vision_config",
        "tensorrt_llm/_torch/models/encoders.py:42:29: DL106 PinnedElsewhere hard-codes its metadata class "
        '(get_attention_backend("VANILLA")) while its attention layers are pinned to "TRTLLM" (vision_config, '
        "line 40): the layers get metadata of another backend (AttributeError at the first forward); use "
        'get_attention_backend("TRTLLM").Metadata',
        "Found 3 findings in 15 files.",
    ]


def test_dl106_judges_layers_given_their_backend_by_name(make_tree: MakeTree) -> None:
    head = ENCODER_HEAD.replace("import get_attention_backend", "import create_attention, get_attention_backend")
    source = head + "".join(
        [
            encoder(  # the layer factory takes the encoder's backend, the metadata the LLM's
                "Factory",
                "self.attn = create_attention(encoder_backend, layer_idx=0)",
                "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata",
            ),
            encoder(  # both from the config kept on self under another name: consistent
                "FactoryOnSelf",
                "self.config = model_config",
                "self.attn = create_attention(self.config.attn_backend, layer_idx=0)",
                "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata",
            ),
            encoder(  # a backend keyword on the layer, pinned with the constant; metadata of VANILLA
                "Keyword",
                "self.attn = Attention(config=model_config, attn_backend=BACKEND_TRTLLM)",
                'self.metadata_cls = get_attention_backend("VANILLA").Metadata',
            ),
            encoder(  # the same backend both ways: consistent
                "KeywordSame",
                'self.attn = Attention(config=model_config, attn_backend="TRTLLM")',
                'self.metadata_cls = get_attention_backend("TRTLLM").Metadata',
            ),
            encoder(  # a config built with the keyword is not a layer; both follow it
                "BuiltConfig",
                "vision_config = ModelConfig(attn_backend=encoder_backend)",
                "self.attn = Attention(config=vision_config)",
                "self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata",
            ),
            encoder(  # one backend name for both, the layers' through a copy on self: consistent
                "OneName",
                "backend_name = encoder_backend or model_config.attn_backend",
                "self.backend = backend_name",
                "self.attn = create_attention(self.backend, layer_idx=0)",
                "self.metadata_cls = get_attention_backend(backend_name).Metadata",
            ),
            encoder(  # a hard-coded metadata class, layers given a backend chosen at run time
                "HardCoded",
                "self.attn = Attention(config=model_config, attn_backend=encoder_backend)",
                "self.metadata_cls = AttentionMetadata",
            ),
        ]
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, "tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:12:29: DL106 Factory takes its metadata class from "
        "get_attention_backend(model_config.attn_backend), but gives its attention layers the backend "
        "passed as `encoder_backend` (line 11): when the two differ the layers get metadata of another backend "
        "(AttributeError at the first forward); derive the metadata class with "
        "get_attention_backend(encoder_backend).Metadata",
        "tensorrt_llm/_torch/models/encoders.py:25:29: DL106 Keyword hard-codes its metadata class "
        '(get_attention_backend("VANILLA")) while its attention layers are pinned to "TRTLLM" (line 24): the '
        "layers get metadata of another backend (AttributeError at the first forward); use "
        'get_attention_backend("TRTLLM").Metadata',
        "tensorrt_llm/_torch/models/encoders.py:52:29: DL106 HardCoded hard-codes its metadata class "
        "(AttentionMetadata) while its attention layers get the backend passed as `encoder_backend` (line 51): any "
        "other backend gets metadata it cannot read; derive it with get_attention_backend(encoder_backend).Metadata",
        "Found 3 findings in 15 files.",
    ]


def test_dl106_follows_one_backend_however_it_is_written(make_tree: MakeTree) -> None:
    """Red-team cases (2026-12-02): the same backend read two ways is consistent; annotated
    metadata, aliased imports, a `backend_name=` keyword and a kept backend class are judged;
    calls that are no attention layer (a dict, a log call, `super().__init__`) build none."""
    head = (
        "import copy\nimport dataclasses\nimport logging\n\n"
        "from tensorrt_llm._torch.attention_backend.interface import AttentionMetadata\n"
        "from tensorrt_llm._torch.attention_backend.utils import create_attention, get_attention_backend\n"
        "from tensorrt_llm._torch.attention_backend.utils import create_attention as make_attn\n"
        "from tensorrt_llm._torch.attention_backend.utils import get_attention_backend as gab\n\n\n"
    )
    metadata = "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata"
    source = head + "".join(
        [
            encoder("CopiedRead", "self.attn_backend = model_config.attn_backend", metadata,
                    "self.attn = create_attention(self.attn_backend, layer_idx=0)"),
            encoder("TupleCopy", "self.backend, self.dim = model_config.attn_backend, 64", metadata,
                    "self.attn = create_attention(self.backend, layer_idx=0)"),
            encoder("SubConfig", "self.vision_config = model_config.vision_config",
                    "self.metadata_cls = get_attention_backend(model_config.vision_config.attn_backend).Metadata",
                    "self.attn = create_attention(self.vision_config.attn_backend)"),
            encoder("UnchangedCopy", "vc = copy.deepcopy(model_config)", metadata,
                    'self.attn = create_attention(getattr(vc, "attn_backend"))'),
            encoder("ReplaceThenRead", "vc = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                    "self.metadata_cls = get_attention_backend(vc.attn_backend).Metadata",
                    "self.attn = make_attn(encoder_backend)"),
            encoder("NotLayers", metadata, "self.extra = dict(attn_backend=encoder_backend)",
                    'logging.info("tower", attn_backend=encoder_backend)',
                    "super().__init__(model_config, attn_backend=encoder_backend)",
                    "self.attn = create_attention(model_config.attn_backend, attn_backend=None)"),
            encoder("Annotated", "self.metadata_cls: type = gab(model_config.attn_backend).Metadata",
                    "self.attn = make_attn(encoder_backend)"),
            encoder("BackendNameKeyword", metadata, "self.attn = create_attention(backend_name=encoder_backend)"),
            encoder("KeptClass", "backend_cls = gab(model_config.attn_backend)",
                    "self.metadata_cls = backend_cls.Metadata", "self.attn = create_attention(encoder_backend)"),
            encoder("TwoSubConfigs",
                    "self.metadata_cls = get_attention_backend(model_config.text_config.attn_backend).Metadata",
                    "self.attn = create_attention(model_config.vision_config.attn_backend)"),
            encoder("Reassigned", "backend = model_config.attn_backend",  # the name, as it is where it is used
                    "self.metadata_cls = get_attention_backend(backend).Metadata", 'backend = "VANILLA"',
                    "self.attn = create_attention(backend)"),
        ]
    )  # fmt: skip
    root = make_tree({"tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    reported = [line.split(" DL106 ")[1].split(" ")[0] for line in lines[:-1]]
    assert reported == ["Annotated", "BackendNameKeyword", "KeptClass", "TwoSubConfigs", "Reassigned"], lines
    assert lines[-3] == (
        "tensorrt_llm/_torch/models/encoders.py:76:29: DL106 TwoSubConfigs takes its metadata class from "
        "get_attention_backend(model_config.text_config.attn_backend), but gives its attention layers the backend "
        "model_config.vision_config.attn_backend (line 77): when the two differ the layers get metadata of another "
        "backend (AttributeError at the first forward); derive the metadata class with "
        "get_attention_backend(model_config.vision_config.attn_backend).Metadata"
    )


def test_dl106_follows_partial_factories_unpacked_keywords_and_configs_derived_in_place(make_tree: MakeTree) -> None:
    """A layer factory bound with `functools.partial`, a backend keyword unpacked from a literal
    (`**{"attn_backend": x}`, `**dict(attn_backend=x)`) and a config derived in the layer's own
    arguments (`Attention(config=replace(c, attn_backend=x))`) give the layers that backend."""
    head = ENCODER_HEAD.replace("import dataclasses\n", "import dataclasses\nimport functools\n").replace(
        "import get_attention_backend", "import create_attention, get_attention_backend"
    )
    metadata = "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata"
    source = head + "".join(
        [
            encoder("Partial", metadata, "make = functools.partial(create_attention, encoder_backend)",
                    "self.attn = make(layer_idx=0)"),
            encoder("PartialSame", metadata, "make = functools.partial(create_attention, model_config.attn_backend)",
                    "self.attn = make(layer_idx=0)"),
            encoder("PartialLayer", metadata, "make = functools.partial(Attention, attn_backend=encoder_backend)",
                    "self.attn = make(config=model_config)"),
            encoder("Unpacked", 'self.metadata_cls = get_attention_backend("VANILLA").Metadata',
                    'self.attn = Attention(config=model_config, **{"attn_backend": BACKEND_TRTLLM})'),
            encoder("UnpackedDict", metadata,
                    "self.attn = Attention(config=model_config, **dict(attn_backend=encoder_backend))"),
            encoder("UnpackedSame", metadata,
                    'self.attn = Attention(config=model_config, **{"attn_backend": model_config.attn_backend})'),
            encoder("InlineReplace", metadata,
                    "self.attn = Attention(config=dataclasses.replace(model_config, attn_backend=encoder_backend))"),
            encoder("InlineReplaceSame", metadata, "self.attn = Attention(config=dataclasses.replace("
                    "model_config, attn_backend=model_config.attn_backend, dtype=None))"),
        ]
    )  # fmt: skip
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, "tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    reported = [line.split(" DL106 ")[1].split(" ")[0] for line in lines[:-1]]
    assert reported == ["Partial", "PartialLayer", "Unpacked", "UnpackedDict", "InlineReplace"], lines
    assert lines[0] == (
        "tensorrt_llm/_torch/models/encoders.py:12:29: DL106 Partial takes its metadata class from "
        "get_attention_backend(model_config.attn_backend), but gives its attention layers the backend "
        "passed as `encoder_backend` (line 13): when the two differ the layers get metadata of another backend "
        "(AttributeError at the first forward); derive the metadata class with "
        "get_attention_backend(encoder_backend).Metadata"
    )
    assert lines[2] == (
        "tensorrt_llm/_torch/models/encoders.py:33:29: DL106 Unpacked hard-codes its metadata class "
        '(get_attention_backend("VANILLA")) while its attention layers are pinned to "TRTLLM" (line 34): the '
        "layers get metadata of another backend (AttributeError at the first forward); use "
        'get_attention_backend("TRTLLM").Metadata'
    )


def test_dl106_a_config_name_rebound_to_its_override_is_one_config_from_there(make_tree: MakeTree) -> None:
    """`model_config = replace(model_config, attn_backend=b)` (or a copy given the backend under
    the same name): layers and metadata class read from the name afterwards read one object. What
    was read from it before the rebinding read the original (2026-12-02: the override was matched
    against itself, "derive both from model_config")."""
    head = ENCODER_HEAD.replace("import dataclasses\n", "import copy\nimport dataclasses\n")
    metadata = "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata"
    source = head + "".join(
        [
            encoder("Rebind", "if encoder_backend is not None:",
                    "    model_config = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                    "self.attn = Attention(config=model_config)", metadata),
            encoder("CopyRebind", "model_config = copy.deepcopy(model_config)",
                    "model_config.attn_backend = encoder_backend", "self.attn = Attention(config=model_config)",
                    metadata),
            encoder("OnSelf", "self.model_config = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                    "self.attn = Attention(config=self.model_config)",
                    "self.metadata_cls = get_attention_backend(self.model_config.attn_backend).Metadata"),
            encoder("KeptAfter",  # self.model_config is the overridden config
                    "model_config = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                    "self.model_config = model_config", "self.attn = Attention(config=model_config)",
                    "self.metadata_cls = get_attention_backend(self.model_config.attn_backend).Metadata"),
            encoder("ReadBefore", metadata,  # the metadata class read the original
                    "model_config = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                    "self.attn = Attention(config=model_config)"),
            encoder("KeptBefore", "self.model_config = model_config",  # self.model_config is the original
                    "model_config = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                    "self.attn = Attention(config=model_config)",
                    "self.metadata_cls = get_attention_backend(self.model_config.attn_backend).Metadata"),
            encoder("CopyReadBefore", "model_config = copy.deepcopy(model_config)", metadata,
                    "model_config.attn_backend = encoder_backend", "self.attn = Attention(config=model_config)"),
        ]
    )  # fmt: skip
    root = make_tree({"tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:43:29: DL106 ReadBefore takes its metadata class from "
        "model_config's attn_backend read before line 44, but builds its attention layers from model_config, whose "
        "attn_backend is overridden (line 44): with a per-encoder override the layers get metadata of another "
        "backend (AttributeError at the first forward); derive the metadata class from model_config after line 44",
        "tensorrt_llm/_torch/models/encoders.py:53:29: DL106 KeptBefore takes its metadata class from "
        "self.model_config's attn_backend, but builds its attention layers from model_config, whose attn_backend "
        "is overridden (line 51): with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); derive both from model_config",
        "tensorrt_llm/_torch/models/encoders.py:59:29: DL106 CopyReadBefore takes its metadata class from "
        "model_config's attn_backend read before line 60, but builds its attention layers from model_config, whose "
        "attn_backend is overridden (line 60): with a per-encoder override the layers get metadata of another "
        "backend (AttributeError at the first forward); derive the metadata class from model_config after line 60",
        "Found 3 findings in 15 files.",
    ]


def test_dl106_a_name_given_a_config_and_its_override_on_two_branches_holds_the_override(make_tree: MakeTree) -> None:
    """A default and a conditional override of one name (`vision_config = model_config`, then `if
    b: vision_config = replace(...)`; the two arms of an `if`, in either order; the same kept on
    self) is one config: layers and metadata class read from the name agree (red-team, 2026-12-02:
    the earlier binding was kept next to the override, "derive both from vision_config"). Read
    next to the config it overrides, or before the override, it still disagrees."""
    override = "dataclasses.replace(model_config, attn_backend=encoder_backend)"
    vision = (
        "self.attn = Attention(config=vision_config)",
        "self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata",
    )
    on_self = (
        "self.attn = Attention(config=self.model_config)",
        "self.metadata_cls = get_attention_backend(self.model_config.attn_backend).Metadata",
    )
    metadata = "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata"
    source = ENCODER_HEAD + "".join(
        [
            encoder("DefaultThenIf", "vision_config = model_config", "if encoder_backend is not None:",
                    f"    vision_config = {override}", *vision),
            encoder("IfElse", "if encoder_backend is not None:", f"    vision_config = {override}", "else:",
                    "    vision_config = model_config", *vision),
            encoder("ElseOverrides", "if encoder_backend is None:", "    vision_config = model_config", "else:",
                    f"    vision_config = {override}", *vision),
            encoder("OnSelf", "self.model_config = model_config", "if encoder_backend is not None:",
                    f"    self.model_config = {override}", *on_self),
            encoder("OnSelfIfElse", "if encoder_backend is not None:", f"    self.model_config = {override}",
                    "else:", "    self.model_config = model_config", *on_self),
            encoder("DefaultThenIfOther", "vision_config = model_config", "if encoder_backend is not None:",
                    f"    vision_config = {override}", vision[0], metadata),
            encoder("IfElseOther", "if encoder_backend is not None:", f"    vision_config = {override}", "else:",
                    "    vision_config = model_config", vision[0], metadata),
            encoder("OnSelfOther", "self.model_config = model_config", "if encoder_backend is not None:",
                    f"    self.model_config = {override}", on_self[0], metadata),
            encoder("LayersBeforeOverride", "vision_config = model_config", vision[0],
                    f"vision_config = {override}", vision[1]),
        ]
    )  # fmt: skip
    root = make_tree({"tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    tail = (
        "whose attn_backend is overridden ({line}): with a per-encoder override the layers get metadata of "
        "another backend (AttributeError at the first forward); derive both from {layers}"
    )
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:63:29: DL106 DefaultThenIfOther takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from vision_config, "
        + tail.format(line="line 61", layers="vision_config"),
        "tensorrt_llm/_torch/models/encoders.py:73:29: DL106 IfElseOther takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from vision_config, "
        + tail.format(line="line 69", layers="vision_config"),
        "tensorrt_llm/_torch/models/encoders.py:82:29: DL106 OnSelfOther takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from self.model_config, "
        + tail.format(line="line 80", layers="self.model_config"),
        "tensorrt_llm/_torch/models/encoders.py:90:29: DL106 LayersBeforeOverride takes its metadata class from "
        "vision_config's attn_backend, which is overridden (line 89), but builds its attention layers from "
        "vision_config read before line 89, whose attn_backend is not: with a per-encoder override the layers get "
        "metadata of another backend (AttributeError at the first forward); build the layers from vision_config "
        "after line 89",
        "Found 4 findings in 15 files.",
    ]


def test_dl106_a_methods_local_names_are_its_own(make_tree: MakeTree) -> None:
    """A factory classmethod that rebinds its `model_config` to an override and hands it to `cls`
    does not make `__init__`'s `model_config` (another variable) read "before" that rebinding
    (red-team, 2026-12-02: overrides, copies, aliases and names passed to calls carried over from
    one method to the next). What a method keeps on self is the class's: a metadata class read
    from it in another method is still judged against the layers."""
    override = "dataclasses.replace(model_config, attn_backend=encoder_backend)"
    source = ENCODER_HEAD + (
        "class Factory:\n"
        "    def __init__(self, model_config):\n"
        "        self.attn = Attention(config=model_config)\n"
        "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n\n"
        "    @classmethod\n"
        "    def from_llm_config(cls, model_config, encoder_backend=None):\n"
        "        if encoder_backend is not None:\n"
        f"            model_config = {override}\n"
        "        return cls(model_config)\n\n\n"
        "class HelperFirst:\n"  # a local override in an earlier method is not __init__'s
        "    def _vision(self, model_config, encoder_backend):\n"
        f"        vision_config = {override}\n"
        "        check_backend(vision_config)\n\n"
        "    def __init__(self, model_config, encoder_backend):\n"
        "        self.attn = Attention(config=model_config)\n"
        "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n\n\n"
        "class CrossMethod:\n"
        "    def __init__(self, model_config, encoder_backend):\n"
        "        self.model_config = model_config\n"
        f"        vision_config = {override}\n"
        "        self.attn = Attention(config=vision_config)\n\n"
        "    def _init_metadata(self):\n"
        "        self.metadata_cls = get_attention_backend(self.model_config.attn_backend).Metadata\n"
    )
    root = make_tree({"tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:38:29: DL106 CrossMethod takes its metadata class from "
        "self.model_config's attn_backend, but builds its attention layers from vision_config, whose attn_backend "
        "is overridden (line 34): with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); derive both from vision_config",
        "Found 1 finding in 15 files.",
    ]


def test_dl106_a_config_handed_to_a_helper_method_is_the_callers(make_tree: MakeTree) -> None:
    """A method's parameter is what `self.method(...)` hands it (by position, after self unless
    static, or by keyword): a helper that derives the override from its `model_config` and builds
    the layers is judged against `__init__`'s metadata class, now that the two methods' local names
    are their own; a helper given the override reads the same backend as a metadata class derived
    from it (2026-12-02: reported, `cfg.attn_backend` taken for another backend)."""
    head = ENCODER_HEAD.replace("import get_attention_backend", "import create_attention, get_attention_backend")
    override = "dataclasses.replace(model_config, attn_backend=encoder_backend)"
    metadata = "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata"
    source = head + (
        "class HelperOverrides:\n"
        "    def __init__(self, model_config, encoder_backend):\n"
        "        self.attn = self._make(model_config, encoder_backend)\n"
        f"        {metadata}\n\n"
        "    def _make(self, model_config, encoder_backend):\n"
        f"        vision_config = {override}\n"
        "        return Attention(config=vision_config)\n\n\n"
        "class HelperRebinds:\n"
        "    def __init__(self, model_config, encoder_backend):\n"
        "        self.attn = self._make(model_config, backend=encoder_backend)\n"
        f"        {metadata}\n\n"
        "    def _make(self, model_config, *, backend):\n"
        "        if backend is not None:\n"
        "            model_config = dataclasses.replace(model_config, attn_backend=backend)\n"
        "        return Attention(config=model_config)\n\n\n"
        "class StaticHelper:\n"
        "    def __init__(self, model_config, encoder_backend):\n"
        "        self.attn = self._make(model_config, encoder_backend)\n"
        f"        {metadata}\n\n"
        "    @staticmethod\n"
        "    def _make(config, backend):\n"
        "        vc = dataclasses.replace(config, attn_backend=backend)\n"
        "        return Attention(config=vc)\n\n\n"
        "class HelperGivenTheOverride:\n"
        "    def __init__(self, model_config, encoder_backend):\n"
        f"        vision_config = {override}\n"
        "        self._build(vision_config)\n"
        "        self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata\n\n"
        "    def _build(self, cfg):\n"
        "        self.attn = create_attention(cfg.attn_backend, layer_idx=0)\n"
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, "tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    tail = (
        "with a per-encoder override the layers get metadata of another backend (AttributeError at the first "
        "forward); derive both from "
    )
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:12:29: DL106 HelperOverrides takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from vision_config, whose attn_backend is "
        "overridden (line 15): " + tail + "vision_config",
        "tensorrt_llm/_torch/models/encoders.py:22:29: DL106 HelperRebinds takes its metadata class from "
        "__init__()'s model_config's attn_backend, but builds its attention layers from _make()'s model_config, "
        "whose attn_backend is overridden (line 26): " + tail + "_make()'s model_config",
        "tensorrt_llm/_torch/models/encoders.py:33:29: DL106 StaticHelper takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from vc, whose attn_backend is overridden "
        "(line 37): " + tail + "vc",
        "Found 3 findings in 15 files.",
    ]


def test_dl106_a_config_passed_to_layers_counts_however_it_is_named(make_tree: MakeTree) -> None:
    """A name the rule knows as a config (an override, a copy, what one is derived from, a
    config whose attn_backend is read) counts as the layers' config without "config" in its name
    (2026-12-02: `vision_cfg` was missed); other arguments of a call still do not."""
    head = ENCODER_HEAD.replace("import dataclasses\n", "import copy\nimport dataclasses\n")
    metadata = "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata"
    source = head + "".join(
        [
            encoder("ShortName", "vision_cfg = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                    "self.blocks = [VisionBlock(vision_cfg) for _ in range(2)]", metadata),
            encoder("KeptOnSelf", "vcfg = copy.deepcopy(model_config)", "vcfg.attn_backend = encoder_backend",
                    "self.cfg = vcfg", "self.blocks = [VisionBlock(self.cfg, 64) for _ in range(2)]", metadata),
            encoder("SetAttr", "cfg = copy.deepcopy(model_config)", 'setattr(cfg, "attn_backend", encoder_backend)',
                    "self.attn = Attention(config=cfg)", metadata),
            encoder("HardCodedShort", "cfg = copy.deepcopy(model_config)", "self.attn = Attention(cfg, hidden)",
                    "self.metadata_cls = AttentionMetadata"),
            encoder("SameShortName", "cfg = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                    "self.attn = Attention(cfg, encoder_backend)",
                    "self.metadata_cls = get_attention_backend(cfg.attn_backend).Metadata"),
            encoder("OtherArguments", "dim = model_config.hidden_size", "self.proj = Linear(dim, encoder_backend)",
                    "self.metadata_cls = AttentionMetadata"),
        ]
    )  # fmt: skip
    root = make_tree({"tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:14:29: DL106 ShortName takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from vision_cfg, whose attn_backend is "
        "overridden (line 12): with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); derive both from vision_cfg",
        "tensorrt_llm/_torch/models/encoders.py:23:29: DL106 KeptOnSelf takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from self.cfg, whose attn_backend is "
        "overridden (line 20): with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); derive both from self.cfg",
        "tensorrt_llm/_torch/models/encoders.py:31:29: DL106 SetAttr takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from cfg, whose attn_backend is "
        "overridden (line 29): with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); derive both from cfg",
        "tensorrt_llm/_torch/models/encoders.py:38:29: DL106 HardCodedShort hard-codes its metadata class "
        "(AttentionMetadata) while its attention layers follow cfg's attn_backend: any other backend gets "
        "metadata it cannot read; derive it with get_attention_backend(cfg.attn_backend).Metadata",
        "Found 4 findings in 15 files.",
    ]


def test_dl106_layers_from_the_original_config_and_metadata_from_its_override(make_tree: MakeTree) -> None:
    """The reverse of an override the layers read: the metadata class follows an override of the
    config the layers are built from, under the rebound name or another (2026-12-02: silent since
    the rebinding is one config; before, it was reported only by matching the override against
    itself). Not reported when some layers follow the override: the rule does not know which calls
    build attention layers (`PatchEmbed(model_config)`)."""
    head = ENCODER_HEAD.replace("import dataclasses\n", "import copy\nimport dataclasses\n").replace(
        "import get_attention_backend", "import create_attention, get_attention_backend"
    )
    override = "dataclasses.replace(model_config, attn_backend=encoder_backend)"
    source = head + "".join(
        [
            encoder("LayersBefore", "self.attn = Attention(config=model_config)", f"model_config = {override}",
                    "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata"),
            encoder("OtherName", f"vision_config = {override}", "self.attn = Attention(config=model_config)",
                    "self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata"),
            encoder("CopyOverride", "vcfg = copy.deepcopy(model_config)", "vcfg.attn_backend = encoder_backend",
                    "self.blocks = [VisionBlock(model_config) for _ in range(2)]",
                    "self.metadata_cls = get_attention_backend(vcfg.attn_backend).Metadata"),
            encoder("KeptOnSelf", f"self.vision_config = {override}", "self.attn = Attention(config=model_config)",
                    "self.metadata_cls = get_attention_backend(self.vision_config.attn_backend).Metadata"),
            encoder("AlsoFollows", f"vision_config = {override}", "self.patch_embed = PatchEmbed(model_config)",
                    "self.attn = Attention(config=vision_config)",
                    "self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata"),
            encoder("RebindBefore", "self.patch_embed = PatchEmbed(model_config)", f"model_config = {override}",
                    "self.attn = Attention(config=model_config)",
                    "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata"),
            encoder("ByName", f"vision_config = {override}", "self.patch_embed = PatchEmbed(model_config)",
                    "self.attn = create_attention(encoder_backend, layer_idx=0)",
                    "self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata"),
        ]
    )  # fmt: skip
    root = make_tree({"tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    tail = (
        "whose attn_backend is not: with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); build the layers from "
    )
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:14:29: DL106 LayersBefore takes its metadata class from "
        "model_config's attn_backend, which is overridden (line 13), but builds its attention layers from "
        "model_config read before line 13, " + tail + "model_config after line 13",
        "tensorrt_llm/_torch/models/encoders.py:21:29: DL106 OtherName takes its metadata class from "
        "vision_config's attn_backend, which is overridden (line 19), but builds its attention layers from "
        "model_config, " + tail + "vision_config",
        "tensorrt_llm/_torch/models/encoders.py:29:29: DL106 CopyOverride takes its metadata class from "
        "vcfg's attn_backend, which is overridden (line 27), but builds its attention layers from "
        "model_config, " + tail + "vcfg",
        "tensorrt_llm/_torch/models/encoders.py:36:29: DL106 KeptOnSelf takes its metadata class from "
        "self.vision_config's attn_backend, which is overridden (line 34), but builds its attention layers from "
        "model_config, " + tail + "self.vision_config",
        "Found 4 findings in 15 files.",
    ]


def test_dl106_a_config_only_logged_or_printed_builds_no_layer(make_tree: MakeTree) -> None:
    """An override handed to a logger's method or `print` is shown, not built into a layer
    (2026-12-02: `logger.info("%s", vcfg)` read as layers built from vcfg), nor is one inside a log
    call's arguments or shown by a builtin (`str(vcfg)`). A config passed to any other call (a
    validator) still counts, since the rule does not know what the call builds."""
    head = ENCODER_HEAD.replace("import dataclasses\n", "import dataclasses\nimport logging\n")
    override = "dataclasses.replace(model_config, attn_backend=encoder_backend)"
    metadata = "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata"
    source = head + "".join(
        [
            encoder("Logs", f"vcfg = {override}", 'logger.info("encoder config: %s", vcfg)',
                    "self.attn = Attention(config=model_config)", metadata),
            encoder("LogsOnSelf", f"vision_config = {override}", 'self._logger.warning_once("%s", vision_config)',
                    "self.attn = Attention(config=model_config)", metadata),
            encoder("Prints", f"cfg = {override}", "print(cfg)", 'logging.debug("%s", cfg)',
                    "self.attn = Attention(config=model_config)", metadata),
            encoder("LogsAndBuilds", f"vcfg = {override}", 'logger.info("%s", vcfg)',
                    "self.attn = Attention(config=vcfg)", metadata),
            encoder("LogsShown", f"vcfg = {override}", 'logger.info("%s", str(vcfg))', "text = repr(vcfg)",
                    "self.attn = Attention(config=model_config)", metadata),
            encoder("Catalogs", f"vcfg = {override}", "self.catalog.info(vcfg)",
                    "self.attn = Attention(config=model_config)", metadata),
        ]
    )  # fmt: skip
    root = make_tree({"tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:40:29: DL106 LogsAndBuilds takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from vcfg, whose attn_backend is "
        "overridden (line 37): with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); derive both from vcfg",
        # `catalog` holds "log" but names no logger: what it is handed may build layers.
        "tensorrt_llm/_torch/models/encoders.py:57:29: DL106 Catalogs takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from vcfg, whose attn_backend is "
        "overridden (line 54): with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); derive both from vcfg",
        "Found 2 findings in 15 files.",
    ]


def test_dl106_follows_a_module_level_helper_that_derives_the_config(make_tree: MakeTree) -> None:
    """A helper in the same file whose body returns a copy of its parameter with attn_backend set
    (GLM5's `_vision_sub_config`: `dataclasses.replace(config, attn_backend="VANILLA")`, or a copy
    given the backend) is that override of its argument; one that returns its parameter is the
    same config; a method of the class called as `self._x(...)` too (red-team: the helper's call,
    named like a config, was taken for one that derives nothing). A helper that branches, or one
    of another module, is not followed."""
    head = ENCODER_HEAD.replace("import dataclasses\n", "import copy\nimport dataclasses\n") + (
        "def _vision_sub_config(config: ModelConfig) -> ModelConfig:\n"
        '    return dataclasses.replace(config, attn_backend="VANILLA")\n\n\n'
        "def _with_backend(config, backend=None):\n"
        '    """The tower\'s config on its own backend."""\n'
        "    vision = copy.deepcopy(config)\n"
        "    vision.attn_backend = backend\n"
        "    return vision\n\n\n"
        "def _unchanged(config):\n"
        "    return config\n\n\n"
        "def _branches(config, backend):\n"
        "    if backend is None:\n"
        "        return config\n"
        "    return dataclasses.replace(config, attn_backend=backend)\n\n\n"
    )
    metadata = "self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata"
    source = head + (
        "class HelperVisionModel(nn.Module, MultimodalEncoderMixin):\n"
        "    def __init__(self, model_config: ModelConfig) -> None:\n"
        "        super().__init__()\n"
        "        vision_config = _vision_sub_config(model_config)\n"
        "        self.attn = Attention(hidden_size=64, num_attention_heads=4, config=vision_config)\n"
        "        self.metadata_cls = get_attention_backend(model_config.attn_backend).Metadata\n\n\n"
    ) + "".join(
        [
            encoder("HelperFollowed", "vision_config = _vision_sub_config(model_config)",
                    "self.attn = Attention(hidden_size=64, num_attention_heads=4, config=vision_config)",
                    "self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata"),
            encoder("CopyGivenTheBackend", "vcfg = _with_backend(model_config, backend=encoder_backend)",
                    "self.blocks = [VisionBlock(vcfg) for _ in range(2)]", metadata),
            encoder("CopyFollowed", "vcfg = _with_backend(model_config, encoder_backend)",
                    "self.attn = Attention(config=vcfg)",
                    "self.metadata_cls = get_attention_backend(encoder_backend).Metadata"),
            encoder("Unchanged", "vision_config = _unchanged(model_config)",
                    "self.attn = Attention(config=vision_config)", metadata),
            encoder("InPlace", "self.attn = Attention(config=_vision_sub_config(model_config))", metadata),
            encoder("PinnedElsewhere", "vision_config = _vision_sub_config(model_config)",
                    "self.attn = Attention(config=vision_config)",
                    'self.metadata_cls = get_attention_backend("TRTLLM").Metadata'),
            encoder("Branches", "vision_config = _branches(model_config, encoder_backend)",
                    "self.attn = Attention(config=vision_config)", metadata),
        ]
    ) + (
        "class MethodHelper:\n"
        "    def __init__(self, model_config, encoder_backend):\n"
        "        vision_config = self._sub(model_config)\n"
        "        self.attn = Attention(config=vision_config)\n"
        f"        {metadata}\n\n"
        "    @staticmethod\n"
        "    def _sub(config):\n"
        "        return dataclasses.replace(config, attn_backend=BACKEND_TRTLLM)\n"
    )  # fmt: skip
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, "tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    pinned = "(AttributeError at the first forward); derive both from vision_config"
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:36:29: DL106 HelperVisionModel takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from vision_config, whose attn_backend is "
        'pinned to "VANILLA" (line 34, by _vision_sub_config()): unless model_config\'s attn_backend is "VANILLA" '
        "too, the layers get metadata of another backend " + pinned,
        "tensorrt_llm/_torch/models/encoders.py:50:29: DL106 CopyGivenTheBackend takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from vcfg, whose attn_backend is overridden "
        "(line 48, by _with_backend()): with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); derive both from vcfg",
        "tensorrt_llm/_torch/models/encoders.py:70:29: DL106 InPlace takes its metadata class from "
        "get_attention_backend(model_config.attn_backend), but gives its attention layers the backend "
        '"VANILLA" (line 69, by _vision_sub_config()): when the two differ the layers get metadata of another '
        "backend (AttributeError at the first forward); derive the metadata class with "
        'get_attention_backend("VANILLA").Metadata',
        "tensorrt_llm/_torch/models/encoders.py:77:29: DL106 PinnedElsewhere hard-codes its metadata class "
        '(get_attention_backend("TRTLLM")) while its attention layers are pinned to "VANILLA" (vision_config, '
        "line 75, by _vision_sub_config()): the layers get metadata of another backend (AttributeError at the "
        'first forward); use get_attention_backend("VANILLA").Metadata',
        "tensorrt_llm/_torch/models/encoders.py:91:29: DL106 MethodHelper takes its metadata class from "
        "model_config's attn_backend, but builds its attention layers from vision_config, whose attn_backend is "
        'pinned to "TRTLLM" (line 89, by _sub()): unless model_config\'s attn_backend is "TRTLLM" too, the layers '
        "get metadata of another backend " + pinned,
        "Found 5 findings in 15 files.",
    ]


def test_dl106_a_backend_picked_by_or_or_by_a_helper_is_one_source(make_tree: MakeTree) -> None:
    """`override or config.attn_backend`, written out or returned by a helper of this file (`def
    _backend(self, backend=None): return backend or self.config.attn_backend`), is one backend
    however it is spelled: the helper's call as its body in the caller's arguments (`self._backend()`
    as `self.config.attn_backend`), `X or Y` by what X and Y read (`config` or `self.config`), a
    method's parameter as what `self.method(...)` hands it. A metadata class and layers that take
    it the same way agree (2026-12-03: each was reported as taking another backend); one that takes
    the fallback while the other takes the config's own backend still disagrees."""
    head = ENCODER_HEAD.replace("import get_attention_backend", "import create_attention, get_attention_backend")
    helper = "    def _backend(self, backend=None):\n        return backend or self.config.attn_backend\n\n\n"
    source = head + (
        "class HelperInEachMethod:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.metadata_cls = get_attention_backend(self._backend(override)).Metadata\n"
        "        self.blocks = [self._block(override) for _ in range(2)]\n\n"
        "    def _block(self, backend):\n"
        "        return Attention(config=self.config, attn_backend=self._backend(backend))\n\n"
        + helper
        + "class HelperAndItsBody:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.metadata_cls = get_attention_backend(self._backend(override)).Metadata\n"
        "        self.attn = create_attention(override or config.attn_backend, layer_idx=0)\n\n"
        + helper
        + "class HelperDefault:\n"
        "    def __init__(self, config):\n"
        "        self.config = config\n"
        "        self.attn = create_attention(self.config.attn_backend, layer_idx=0)\n"
        "        self.metadata_cls = get_attention_backend(self._backend()).Metadata\n\n"
        + helper
        + "class OrTwoSpellings:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.metadata_cls = get_attention_backend(override or config.attn_backend).Metadata\n"
        "        self.attn = Attention(config=config, attn_backend=override or self.config.attn_backend)\n\n\n"
        "class FunctionHelper:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.metadata_cls = get_attention_backend(_pick(config, override)).Metadata\n"
        "        self.attn = create_attention(_pick(self.config, override), layer_idx=0)\n\n\n"
        "class ParameterHandedOn:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.metadata_cls = get_attention_backend(override).Metadata\n"
        "        self.attn = self._layer(override)\n\n"
        "    def _layer(self, backend):\n"
        "        return create_attention(backend, layer_idx=0)\n\n\n"
        "class OneValueForBoth:\n"
        "    def __init__(self, config, override=None):\n"
        "        backend = override or config.attn_backend\n"
        "        vision_config = dataclasses.replace(config, attn_backend=backend)\n"
        "        self.attn = Attention(config=vision_config)\n"
        "        self.metadata_cls = get_attention_backend(backend).Metadata\n\n\n"
        "class HelperOnlyForMetadata:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.attn = create_attention(self.config.attn_backend, layer_idx=0)\n"
        "        self.metadata_cls = get_attention_backend(self._backend(override)).Metadata\n\n"
        + helper
        + "class FallbackOnlyForLayers:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.metadata_cls = get_attention_backend(config.attn_backend).Metadata\n"
        "        self.attn = create_attention(_pick(config, override), layer_idx=0)\n\n\n"
        "def _pick(config, backend=None):\n"
        "    return backend or config.attn_backend\n"
    )
    root = make_tree({"tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    tail = (
        "(line {line}): when the two differ the layers get metadata of another backend (AttributeError at the "
        "first forward); derive the metadata class with get_attention_backend({layers}).Metadata"
    )
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:77:29: DL106 HelperOnlyForMetadata takes its metadata class from "
        "get_attention_backend(self._backend(override)), but gives its attention layers the backend "
        "self.config.attn_backend " + tail.format(line=76, layers="self.config.attn_backend"),
        "tensorrt_llm/_torch/models/encoders.py:85:29: DL106 FallbackOnlyForLayers takes its metadata class from "
        "get_attention_backend(config.attn_backend), but gives its attention layers the backend "
        "_pick(config, override) " + tail.format(line=86, layers="_pick(config, override)"),
        "Found 2 findings in 15 files.",
    ]


def test_dl106_a_parameter_handed_different_backends_is_each_of_them(make_tree: MakeTree) -> None:
    """A method's parameter is what `self.method(...)` hands it only when every call in the class
    hands it the same backend (red-team, 2026-12-03: `self._layer(override)` then
    `self._layer(config.attn_backend)` was read as the first call's `override` and the second layer,
    given another backend than the metadata class's, went unreported). Calls that disagree are each
    judged: one whose argument is not the metadata class's backend is reported, by position or
    keyword, in either order, from any method, with `create_attention` or a backend keyword. A
    parameter no call hands a value keeps its name, said as the backend passed as it."""
    head = ENCODER_HEAD.replace("import get_attention_backend", "import create_attention, get_attention_backend")
    layer = "    def _layer(self, backend):\n        return create_attention(backend, layer_idx=0)\n\n\n"
    source = head + (
        "class E:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.metadata_cls = get_attention_backend(override).Metadata\n"
        "        self.a1 = self._layer(override)\n"
        "        self.a2 = self._layer(config.attn_backend)\n\n" + layer + "class Swapped:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.metadata_cls = get_attention_backend(override).Metadata\n"
        "        self.a1 = self._layer(config.attn_backend)\n"
        "        self.a2 = self._layer(override)\n\n" + layer + "class ByKeyword:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.metadata_cls = get_attention_backend(override).Metadata\n"
        "        self.a1 = self._layer(backend=override)\n"
        "        self.a2 = self._layer(config.attn_backend)\n\n" + layer + "class FromAnotherMethod:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.metadata_cls = get_attention_backend(override).Metadata\n"
        "        self.a1 = self._layer(override)\n"
        "        self._more(config)\n\n"
        "    def _more(self, config):\n"
        "        self.a2 = self._layer(config.attn_backend)\n\n" + layer + "class BackendKeyword:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.metadata_cls = get_attention_backend(override).Metadata\n"
        "        self.a1 = self._layer(override)\n"
        "        self.a2 = self._layer(config.attn_backend)\n\n"
        "    def _layer(self, backend):\n"
        "        return Attention(config=self.config, attn_backend=backend)\n\n\n"
        "class EveryCallAgrees:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.config = config\n"
        "        self.metadata_cls = get_attention_backend(override).Metadata\n"
        "        self.a1 = self._layer(override)\n"
        "        self.a2 = self._layer(backend=override)\n\n" + layer + "class NeverHanded:\n"
        "    def __init__(self, config, override=None):\n"
        "        self.metadata_cls = get_attention_backend(override).Metadata\n\n" + layer
    )
    root = make_tree({"tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    tail = (
        "when the two differ the layers get metadata of another backend (AttributeError at the first forward); "
        "hand every call of self._layer() the backend the metadata class is derived from"
    )
    given = (
        "tensorrt_llm/_torch/models/encoders.py:{at}:29: DL106 {encoder} takes its metadata class from "
        "get_attention_backend(override), but gives its attention layers the backend config.attn_backend (line "
        "{line}, through self._layer(), which builds them at line {built}): " + tail
    )
    assert lines == [
        given.format(at=12, encoder="E", line=14, built=17),
        given.format(at=23, encoder="Swapped", line=24, built=28),
        given.format(at=34, encoder="ByKeyword", line=36, built=39),
        given.format(at=45, encoder="FromAnotherMethod", line=50, built=53),
        given.format(at=59, encoder="BackendKeyword", line=61, built=64),
        "tensorrt_llm/_torch/models/encoders.py:80:29: DL106 NeverHanded takes its metadata class from "
        "get_attention_backend(override), but gives its attention layers the backend passed as `backend` (line "
        "83): when the two differ the layers get metadata of another backend (AttributeError at the first "
        "forward); derive the metadata class with get_attention_backend(backend).Metadata",
        "Found 6 findings in 15 files.",
    ]


def test_dl106_a_metadata_backend_returned_by_a_helper_is_the_config_it_reads(make_tree: MakeTree) -> None:
    """`get_attention_backend(self._backend())`, `_backend` returning `self.config.attn_backend`,
    takes the metadata class from self.config as the direct spelling does: layers built from an
    override of that config are reported the same (red-team, 2026-12-03: the helper's body was
    read only when two backend expressions were compared). A helper that reads the override the
    layers get agrees with them."""
    layers = (
        "        self.config = config\n"
        "        self.vision_config = dataclasses.replace(config, attn_backend=override)\n"
        "        self.attn = Attention(config=self.vision_config)\n"
    )
    source = ENCODER_HEAD + (
        "class Direct:\n"
        "    def __init__(self, config, override=None):\n"
        + layers
        + "        self.metadata_cls = get_attention_backend(self.config.attn_backend).Metadata\n\n\n"
        "class ThroughHelper:\n"
        "    def __init__(self, config, override=None):\n"
        + layers
        + "        self.metadata_cls = get_attention_backend(self._backend()).Metadata\n\n"
        "    def _backend(self):\n"
        "        return self.config.attn_backend\n\n\n"
        "class HelperReadsTheOverride:\n"
        "    def __init__(self, config, override=None):\n"
        + layers
        + "        self.metadata_cls = get_attention_backend(_backend_of(self.vision_config)).Metadata\n\n\n"
        "def _backend_of(config):\n"
        "    return config.attn_backend\n"
    )
    root = make_tree({"tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    finding = (
        "tensorrt_llm/_torch/models/encoders.py:{at}:29: DL106 {encoder} takes its metadata class from "
        "self.config's attn_backend, but builds its attention layers from self.vision_config, whose attn_backend is "
        "overridden (line {line}): with a per-encoder override the layers get metadata of another backend "
        "(AttributeError at the first forward); derive both from self.vision_config"
    )
    assert lines == [
        finding.format(at=14, encoder="Direct", line=12),
        finding.format(at=22, encoder="ThroughHelper", line=20),
        "Found 2 findings in 15 files.",
    ]


def test_dl106_a_sibling_config_set_to_another_backend_counts_beside_layers_that_follow_it(make_tree: MakeTree) -> None:
    """A second config overridden to another backend than the metadata class's (a merger pinned
    to VANILLA beside the tower's override of the same config, a MiniCPM-V-like merger kept on
    SDPA) is reported even though other layers follow the metadata class (red-team: hidden by
    "some layers follow the override"). A config handed on as it is (`PatchEmbed(model_config)`)
    is still taken for a layer without metadata; a second config on the same backend, or one only
    logged, is consistent."""
    head = ENCODER_HEAD.replace("import dataclasses\n", "import dataclasses\nimport logging\n") + (
        'def _merger_sub_config(config):\n    return dataclasses.replace(config, attn_backend="VANILLA")\n\n\n'
    )
    override = "vision_config = dataclasses.replace(model_config, attn_backend=encoder_backend)"
    layers = (
        "self.attn = Attention(hidden_size=64, num_attention_heads=4, config=vision_config)",
        "self.merger_attn = Attention(hidden_size=64, num_attention_heads=4, config=merger_config)",
    )
    metadata = "self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata"
    source = head + "".join(
        [
            encoder("Merger", override,
                    "merger_config = dataclasses.replace(model_config, attn_backend=BACKEND_TRTLLM)", *layers,
                    metadata),
            encoder("MergerByHelper", override, "merger_config = _merger_sub_config(model_config)", *layers,
                    metadata),
            encoder("MergerOwnSetting", override,
                    "merger_config = dataclasses.replace(model_config, attn_backend=model_config.merger_backend)",
                    *layers, metadata),
            encoder("MergerSameBackend", override,
                    "merger_config = dataclasses.replace(model_config, attn_backend=encoder_backend)", *layers,
                    metadata),
            encoder("MergerLogged", override,
                    'merger_config = dataclasses.replace(model_config, attn_backend="VANILLA")',
                    'logging.info("%s", merger_config)', layers[0], metadata),
            encoder("PatchEmbedBeside", override, "self.patch_embed = PatchEmbed(model_config)", layers[0], metadata),
            encoder("BothPinned", 'vision_config = dataclasses.replace(model_config, attn_backend="TRTLLM")',
                    "merger_config = dataclasses.replace(model_config, attn_backend=BACKEND_TRTLLM)", *layers,
                    metadata),
        ]
    )  # fmt: skip
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, "tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert code == 1
    intro = (
        " takes its metadata class from vision_config's attn_backend, but builds attention layers from "
        "merger_config, whose attn_backend "
    )
    tail = (
        "those layers get metadata of another backend (AttributeError at the first forward); build them from "
        "vision_config"
    )
    assert lines == [
        "tensorrt_llm/_torch/models/encoders.py:20:29: DL106 Merger" + intro + 'is pinned to "TRTLLM" (line 17): '
        'unless vision_config\'s attn_backend is "TRTLLM" too, ' + tail + ' (a layer kept on "TRTLLM" on purpose '
        "cannot take the encoder's metadata)",
        "tensorrt_llm/_torch/models/encoders.py:29:29: DL106 MergerByHelper" + intro + 'is pinned to "VANILLA" '
        '(line 26, by _merger_sub_config()): unless vision_config\'s attn_backend is "VANILLA" too, '
        + tail
        + ' (a layer kept on "VANILLA" on purpose cannot take the encoder\'s metadata)',
        "tensorrt_llm/_torch/models/encoders.py:38:29: DL106 MergerOwnSetting" + intro + "is set to "
        "model_config.merger_backend (line 35): when the two differ, " + tail,
        "Found 3 findings in 15 files.",
    ]


_TRT_OR_FLASHINFER = '"TRTLLM" if model_config.use_trt else "FLASHINFER"'
_CONDITIONAL_ENCODERS = (  # (name, the layers' backend, the metadata class with {same}: the layers' backend)
    ("Paired", '"TRTLLM" if model_config.use_trt else ("VANILLA" if model_config.eager else "FLASHINFER")',
     "get_attention_backend({same}).Metadata"),
    ("ArmsAgree", '"TRTLLM" if model_config.use_trt else BACKEND_TRTLLM', 'get_attention_backend("TRTLLM").Metadata'),
    ("HardCodedClass", '"TRTLLM" if model_config.use_trt else "VANILLA"', "AttentionMetadata"),
    ("ArmPinnedElsewhere", _TRT_OR_FLASHINFER, 'get_attention_backend("TRTLLM").Metadata'),
    ("ArmFollowsAnother", '"TRTLLM" if model_config.use_trt else model_config.attn_backend',
     "get_attention_backend(model_config.attn_backend).Metadata"),
    ("ArmPairedWithAnother", '"TRTLLM" if model_config.use_trt else "VANILLA"',
     f"get_attention_backend({_TRT_OR_FLASHINFER}).Metadata"),
    ("ParameterArm", "encoder_backend if encoder_backend else model_config.attn_backend",
     "get_attention_backend(model_config.attn_backend).Metadata"),
)  # fmt: skip


@pytest.mark.parametrize(
    ("layers", "local", "lines"),
    [
        (("self.attn = create_attention({backend}, layer_idx=0)",), False, (30, 36, 42, 48)),
        (("self.attn = Attention(config=model_config, attn_backend={backend})",), False, (30, 36, 42, 48)),
        (("backend = {backend}", "self.attn = create_attention(backend, layer_idx=0)"), True, (34, 41, 48, 55)),
    ],
    ids=["create_attention", "keyword", "local"],
)
def test_dl106_a_backend_picked_by_a_conditional_is_judged_arm_by_arm(
    make_tree: MakeTree, layers: tuple[str, ...], local: bool, lines: tuple[int, ...]
) -> None:
    """`"TRTLLM" if c else "VANILLA"` given the layers (to `create_attention`, as a backend keyword,
    or through a local name) may be either backend: each arm must agree with the metadata class
    (red-team: the conditional was one opaque backend, reported beside a metadata class that fits
    every arm and unreported as the arm that does not). A metadata class derived from the same
    conditional, or one on the same tests, is paired with it arm by arm; arms all pinned next to a
    hard-coded metadata class are not judged, as a pinned backend is not."""
    head = ENCODER_HEAD.replace("import get_attention_backend", "import create_attention, get_attention_backend")
    source = head + "".join(
        encoder(
            name,
            *(line.format(backend=backend) for line in layers),
            "self.metadata_cls = " + metadata.format(same="backend" if local else backend),
        )
        for name, backend, metadata in _CONDITIONAL_ENCODERS
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, "tensorrt_llm/_torch/models/encoders.py": source})
    code, found = check("--select", "DL106", str(root))
    assert code == 1

    def given(at: int, conditional: str) -> tuple[str, str]:
        """Where an arm is (the line before the metadata class's: the layers' or the local's), and
        the layers' backend as written, for the advice."""
        if local:
            return (
                f"line {at - 2}, one arm of the conditional `backend` holds, given the layers at line {at - 1}",
                "backend",
            )
        return f"line {at - 1}, one arm of a conditional", conditional

    where, advice = given(lines[0], _TRT_OR_FLASHINFER)
    differ = "when the two differ the layers get metadata of another backend (AttributeError at the first forward)"
    path = "tensorrt_llm/_torch/models/encoders.py"
    expected = [
        f"{path}:{lines[0]}:29: DL106 ArmPinnedElsewhere hard-codes its metadata class (get_attention_backend("
        f'"TRTLLM")) while its attention layers are pinned to "FLASHINFER" ({where}): the layers get metadata of '
        f"another backend (AttributeError at the first forward); derive it with "
        f"get_attention_backend({advice}).Metadata",
    ]
    where, advice = given(lines[1], '"TRTLLM" if model_config.use_trt else model_config.attn_backend')
    expected.append(
        f"{path}:{lines[1]}:29: DL106 ArmFollowsAnother takes its metadata class from get_attention_backend("
        f'model_config.attn_backend), but gives its attention layers the backend "TRTLLM" ({where}): {differ}; '
        f"derive the metadata class with get_attention_backend({advice}).Metadata"
    )
    where, advice = given(lines[2], '"TRTLLM" if model_config.use_trt else "VANILLA"')
    expected.append(
        f"{path}:{lines[2]}:29: DL106 ArmPairedWithAnother takes its metadata class from get_attention_backend("
        f'{_TRT_OR_FLASHINFER}), but gives its attention layers the backend "VANILLA" ({where}; the metadata '
        f'class\'s arm is "FLASHINFER"): {differ}; derive the metadata class with '
        f"get_attention_backend({advice}).Metadata"
    )
    where, advice = given(lines[3], "encoder_backend if encoder_backend else model_config.attn_backend")
    expected.append(
        f"{path}:{lines[3]}:29: DL106 ParameterArm takes its metadata class from get_attention_backend("
        f"model_config.attn_backend), but gives its attention layers the backend passed as `encoder_backend` "
        f"({where}): {differ}; derive the metadata class with get_attention_backend({advice}).Metadata"
    )
    assert found == [*expected, "Found 4 findings in 15 files."]


def test_a_shared_literal_module_that_does_not_parse_is_named_as_such(make_tree: MakeTree) -> None:
    """Not "no module ... under the indexed roots": the module is there (a `type` statement, say,
    under an interpreter older than 3.12), and DL100 points at it."""
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": "from typing import Literal\n\ndef broken(:\n    pass\n"})
    code, lines = check("--select", "DL000,DL100", str(root))
    assert (code, lines) == (
        1,
        [
            "tensorrt_llm/llmapi/llm_args.py:3:1: DL100 shared Literal tensorrt_llm.llmapi.llm_args."
            "EncoderAttentionBackend cannot be read: tensorrt_llm.llmapi.llm_args does not parse (syntax error: "
            "invalid syntax, line 3; see its DL000)",
            "tensorrt_llm/llmapi/llm_args.py:3:12: DL000 syntax error: invalid syntax",
            "Found 2 findings in 14 files.",
        ],
    )


def test_dl104_recognises_the_marker_and_get_args_however_imported(make_tree: MakeTree) -> None:
    """Red-team: an aliased `FixedEncoderAttention as FEA` or `get_args as ga` is the marker (or
    `get_args`) all the same, as the facts read it; the alias's reason is still checked."""
    source = (
        "import typing as t\n"
        "from typing import get_args as ga\n\n"
        "from tensorrt_llm._torch.models import modeling_multimodal_mixin as mm\n"
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention as FEA\n"
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin\n"
        "from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend, MoeBackend\n\n\n"
        "class AliasModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": FEA("Hugging Face tower"), "audio": ga(EncoderAttentionBackend)}\n'
        "\n\nclass ModuleModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": mm.FixedEncoderAttention("eager"), "audio": FEA("")}\n'
        "\n\nclass MoeModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": t.get_args(MoeBackend)}\n'
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, MODEL + "modeling_alias.py": source})
    code, lines = check("--select", "DL104", str(root))
    assert (code, lines) == (
        1,
        [
            'tensorrt_llm/_torch/models/modeling_alias.py:15:89: DL104 encoder "audio" is declared '
            "FixedEncoderAttention without a reason; say why its attention cannot be changed",
            'tensorrt_llm/_torch/models/modeling_alias.py:19:45: DL104 encoder "vision": get_args must be '
            "given the shared Literal EncoderAttentionBackend, not MoeBackend",
            "Found 2 findings in 15 files.",
        ],
    )


REASONS = (
    "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin\n\n"
    'HF_REASON = "Hugging Face tower"\n'
)


def reason_models(*reasons: str) -> str:
    """One model per reason expression, M00, M01, ..., declaring it on line 7 + 3 * i."""
    return (
        REASONS
        + "".join(
            f'\n\nclass M{number:02d}(MultimodalModelMixin):\n    encoder_attention_backends = {{"audio": {reason}}}'
            for number, reason in enumerate(reasons)
        )
        + "\n"
    )


def test_dl104_reports_reasons_that_are_not_a_non_empty_string(make_tree: MakeTree) -> None:
    """Red-team: None, an empty f-string or implicit concatenation, a number, unpacked or extra
    arguments are no reason; a name, a call or an f-string with a placeholder may be one."""
    source = reason_models(
        "FixedEncoderAttention(None)",
        "FixedEncoderAttention(reason=None)",
        'FixedEncoderAttention(f"")',
        'FixedEncoderAttention("" " ")',
        "FixedEncoderAttention(1)",
        "FixedEncoderAttention(*())",
        "FixedEncoderAttention(**{})",
        'FixedEncoderAttention("a", "b")',
        "FixedEncoderAttention(HF_REASON)",
        "FixedEncoderAttention(str(HF_REASON))",
        'FixedEncoderAttention(f"{HF_REASON}")',
        'FixedEncoderAttention(reason="eager")',
    )
    root = make_tree({MODEL + "modeling_reasons.py": source})
    code, lines = check("--select", "DL104", str(root))
    missing = "is declared FixedEncoderAttention without a reason; say why its attention cannot be changed"
    path = "tensorrt_llm/_torch/models/modeling_reasons.py"
    assert (code, lines) == (
        1,
        [
            f'{path}:7:44: DL104 encoder "audio" {missing}',
            f'{path}:10:44: DL104 encoder "audio" {missing}',
            f'{path}:13:44: DL104 encoder "audio" {missing}',
            f'{path}:16:44: DL104 encoder "audio" {missing}',
            f'{path}:19:66: DL104 encoder "audio": the reason of FixedEncoderAttention must be a string, not 1',
            f'{path}:22:66: DL104 encoder "audio": pass FixedEncoderAttention its reason as one string, '
            "not unpacked arguments (*())",
            f'{path}:25:66: DL104 encoder "audio": pass FixedEncoderAttention its reason as one string, '
            "not unpacked arguments (**{})",
            f'{path}:28:71: DL104 encoder "audio": FixedEncoderAttention takes one reason, not 2 arguments',
            "Found 8 findings in 15 files.",
        ],
    )
    table = CliRunner().invoke(cli, ["table", str(root)]).output.splitlines()
    dynamic = "\\<dynamic>"  # its `<` escaped: GitHub would drop `<dynamic>` as an HTML tag
    reasons = ["", "", "", "", "", dynamic, "", "a", dynamic, dynamic, dynamic, "eager"]
    assert table[2:] == [f"| M{i:02d} | audio | not configurable | {r} | - |" for i, r in enumerate(reasons)]


def test_dl102_offers_no_fix_that_would_copy_an_inherited_reason_it_cannot_read(make_tree: MakeTree) -> None:
    """Red-team: the inherited `FixedEncoderAttention(HF_REASON)` has a reason only known at run
    time; copying it as `FixedEncoderAttention("<dynamic>")` would write a fake reason DL104 accepts."""
    source = (
        IMPORTS
        + '\nHF_REASON = "Hugging Face tower"\n\n\n'
        + registered("base", "image")
        + 'class BaseModel(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": '
        + "FixedEncoderAttention(HF_REASON)}\n\n\n"
        + registered("omni", "image", "audio")
        + "class OmniModel(BaseModel):\n    pass\n"
    )
    root = make_tree({MODEL + "modeling_omni.py": source})
    assert check("--diff", "--unsafe-fixes", str(root)) == (0, ["declint: would fix 0 findings in 0 files"])
    code, lines = check(str(root))
    assert (code, lines) == (
        1,
        [
            'tensorrt_llm/_torch/models/modeling_omni.py:15:7: DL102 "OmniModel" inherits the declaration of '
            '"BaseModel" (tensorrt_llm._torch.models.modeling_omni), which misses encoder "audio" (registered '
            'modality "audio"); declare it on "OmniModel"',
            "Found 1 finding in 15 files.",
        ],
    )


def test_the_last_of_two_declarations_is_the_one_read_checked_and_fixed(make_tree: MakeTree) -> None:
    """Red-team: Python keeps the last assignment in a class body. The first is dead: DL104 says
    so (and does not check its contents), DL102 reads and fixes the last, the table shows it."""
    source = (
        IMPORTS
        + "\n\n"
        + registered("twice", "image", "audio")
        + "class TwiceModel(MultimodalModelMixin):\n"
        + '    encoder_attention_backends = {"vision": ("TRTLM",), "audio": FixedEncoderAttention("eager")}\n'
        + '    encoder_attention_backends = {"vision": ("VANILLA",)}\n'
    )
    root = make_tree({MODEL + "modeling_twice.py": source})
    path = "tensorrt_llm/_torch/models/modeling_twice.py"
    code, lines = check("--select", "DL102,DL104", str(root))
    assert (code, lines) == (
        1,
        [
            f"{path}:9:5: DL104 encoder_attention_backends is overridden by the assignment on line 10 and has "
            "no effect; remove it",
            f'{path}:10:5: DL102 the declaration of "TwiceModel" misses encoder "audio" (registered modality "audio")',
            "Found 2 findings in 15 files.",
        ],
    )
    code, lines = check("--select", "DL102", "--diff", "--unsafe-fixes", str(root))
    assert lines[-3:] == [
        '-    encoder_attention_backends = {"vision": ("VANILLA",)}',
        '+    encoder_attention_backends = {"vision": ("VANILLA",), "audio": FixedEncoderAttention("TODO: say why '
        'it cannot be changed (inserted by declint --unsafe-fixes)")}',
        "declint: would fix 1 finding in 1 file",
    ]
    table = CliRunner().invoke(cli, ["table", str(root)]).output.splitlines()
    assert table[2:] == ["| TwiceModel | vision | VANILLA |  | TRTLLM |"]


def test_modalities_registered_positionally_through_a_map_constant_or_unpacked(make_tree: MakeTree) -> None:
    """Red-team: the map as MultimodalPlaceholderMetadata's first positional argument, a
    module-level dict given as `placeholder_map=`, and a literal unpacked into the map (`**{...}`),
    in the decorator or in a module-level placeholder_metadata constant, all register "audio"."""
    vision_only = '(MultimodalModelMixin):\n    encoder_attention_backends = {"vision": ("TRTLLM",)}\n\n\n'
    source = (
        IMPORTS
        + '\n_PMAP = {"image": "<image>", "audio": "<audio>"}\n'
        + '_POSITIONAL = MultimodalPlaceholderMetadata({"image": "<image>", **{"audio": "<audio>"}})\n\n\n'
        + '@register_input_processor(object, model_type="a", placeholder_metadata=MultimodalPlaceholderMetadata('
        + '{"image": "<image>", "audio": "<audio>"}))\n'
        + "class PositionalModel"
        + vision_only
        + '@register_input_processor(object, model_type="b", placeholder_metadata=MultimodalPlaceholderMetadata('
        + "placeholder_map=_PMAP))\n"
        + "class MapConstantModel"
        + vision_only
        + '@register_input_processor(object, model_type="c", placeholder_metadata=MultimodalPlaceholderMetadata('
        + 'placeholder_map={"image": "<image>", **{"audio": "<audio>"}}))\n'
        + "class UnpackedModel"
        + vision_only
        + '@register_input_processor(object, model_type="d", placeholder_metadata=_POSITIONAL)\n'
        + "class ConstantModel"
        + vision_only
    )
    root = make_tree({MODEL + "modeling_forms.py": source})
    code, lines = check("--select", "DL102", str(root))
    path = "tensorrt_llm/_torch/models/modeling_forms.py"
    misses = 'misses encoder "audio" (registered modality "audio")'
    assert (code, lines) == (
        1,
        [
            f'{path}:12:5: DL102 the declaration of "PositionalModel" {misses}',
            f'{path}:17:5: DL102 the declaration of "MapConstantModel" {misses}',
            f'{path}:22:5: DL102 the declaration of "UnpackedModel" {misses}',
            f'{path}:27:5: DL102 the declaration of "ConstantModel" {misses}',
            "Found 4 findings in 15 files.",
        ],
    )


def test_dl104_checks_the_entry_of_an_unknown_encoder_so_unsafe_fixes_converge(make_tree: MakeTree) -> None:
    """Red-team: under `"Vision"` the backend "trtllm" went unchecked until the key was fixed, so
    `--fix --unsafe-fixes` refused the key's fix (its output had a finding of its own). Each
    problem now has its finding (naming the encoder the key's fix gives it) and fix in one pass."""
    source = (
        "from tensorrt_llm._torch.models.modeling_multimodal_mixin import FixedEncoderAttention, MultimodalModelMixin"
        "\n\n\nclass CaseModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"Vision": ("trtllm",), "Audio": FixedEncoderAttention("")}\n'
    )
    root = make_tree({MODEL + "modeling_case.py": source})
    path = "tensorrt_llm/_torch/models/modeling_case.py"
    no_reason = (
        f'{path}:5:67: DL104 encoder "audio" is declared FixedEncoderAttention without a reason; say why its '
        "attention cannot be changed"
    )
    code, lines = check("--select", "DL104", str(root))
    assert (code, lines) == (
        1,
        [
            f'{path}:5:35: DL104 unknown encoder "Vision" (did you mean "vision"?); known encoders: vision, audio',
            f'{path}:5:46: DL104 encoder "vision": "trtllm" is not a member of EncoderAttentionBackend (did you '
            'mean "TRTLLM"?)',
            f'{path}:5:58: DL104 unknown encoder "Audio" (did you mean "audio"?); known encoders: vision, audio',
            no_reason,
            "[*] 1 fixable with --fix; 2 more with --fix --unsafe-fixes.",
            "Found 4 findings in 15 files.",
        ],
    )
    code, lines = check("--select", "DL104", "--fix", "--unsafe-fixes", str(root))
    assert (code, lines) == (
        1,
        ["declint: fixed 3 findings in 1 file", no_reason, "Found 1 finding in 15 files (3 fixed)."],
    )
    assert (root / path).read_text().splitlines()[-1] == (
        '    encoder_attention_backends = {"vision": ("TRTLLM",), "audio": FixedEncoderAttention("")}'
    )


def test_an_encoder_listed_twice_is_read_with_its_last_value_as_python_builds_the_dict(make_tree: MakeTree) -> None:
    """`{"vision": ("TRTLLM",), "vision": ("VANILLA",)}` is `{"vision": ("VANILLA",)}` at run time:
    the table (and DL102, the shim) read the first entry (red-team, 2026-12-02)."""
    source = IMPORTS + (
        "\n\nclass TwinModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("TRTLLM",), "audio": ("TRTLLM",), "vision": ("VANILLA",)}\n'
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, MODEL + "modeling_twin.py": source})
    table = CliRunner().invoke(cli, ["table", str(root)]).output.splitlines()
    assert [row for row in table if "TwinModel" in row] == [
        "| TwinModel | audio | TRTLLM |  | TRTLLM |",
        "| TwinModel | vision | VANILLA |  | TRTLLM |",
    ]
    code, lines = check("--select", "DL104", str(root))
    assert (code, lines[0].split(" DL104 ")[1]) == (
        1,
        'encoder "vision" is declared twice; the last entry silently wins',
    )


def test_tuple_of_get_args_is_read_as_get_args(make_tree: MakeTree) -> None:
    """Red-team 53: `tuple(get_args(EncoderAttentionBackend))` (a tuple at run time) was "expected a
    tuple of backend names" and an invalid row of the table; of another Literal it is DL104's
    get_args finding."""
    source = (
        "from tensorrt_llm.llmapi.llm_args import EncoderAttentionBackend, MoeBackend\n"
        + IMPORTS
        + "\n\nclass TupleModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": tuple(get_args(EncoderAttentionBackend))}\n\n\n'
        "class MoeModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": tuple(get_args(MoeBackend))}\n\n\n'
        "class ListModel(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": list(get_args(EncoderAttentionBackend))}\n'
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, MODEL + "modeling_tuple.py": source})
    code, lines = check(str(root))
    assert (code, lines) == (
        1,
        [
            'tensorrt_llm/_torch/models/modeling_tuple.py:13:51: DL104 encoder "vision": get_args must be '
            "given the shared Literal EncoderAttentionBackend, not MoeBackend",
            "Found 1 finding in 15 files.",
        ],
    )
    table = CliRunner().invoke(cli, ["table", str(root)]).output.splitlines()
    assert table[2:] == [
        "| ListModel | vision | VANILLA, TRTLLM, FLASHINFER |  | TRTLLM |",
        "| MoeModel | vision | invalid declaration |  | - |",
        "| TupleModel | vision | VANILLA, TRTLLM, FLASHINFER |  | TRTLLM |",
    ]


def test_dl104_names_a_missing_comma_between_backend_names(make_tree: MakeTree) -> None:
    """Red-team 53: `("VANILLA", "TRTLLM"` / `"FLASHINFER")` joined two names into "TRTLLMFLASHINFER",
    and "did you mean FLASHINFER?" would have dropped TRTLLM. A name split in two (`"TRT" "LLM"`)
    is one member, and a joined typo of no member's parts is an ordinary typo."""
    source = IMPORTS + (
        "\n\nclass Joined(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM"\n'
        '                                             "FLASHINFER")}\n\n\n'
        "class Split(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("TRT" "LLM", "VANILLA")}\n\n\n'
        "class Typo(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("TRT" "LMM",)}\n'
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, MODEL + "modeling_joined.py": source})
    code, lines = check("--select", "DL104", str(root))
    assert (code, lines) == (
        1,
        [
            'tensorrt_llm/_torch/models/modeling_joined.py:8:57: DL104 encoder "vision": "TRTLLM" "FLASHINFER" '
            'are joined by Python into "TRTLLMFLASHINFER", which is not a member of EncoderAttentionBackend; '
            "is a comma missing between them?",
            'tensorrt_llm/_torch/models/modeling_joined.py:17:46: DL104 encoder "vision": "TRTLMM" is not a member '
            'of EncoderAttentionBackend (did you mean "TRTLLM"?)',
            "Found 2 findings in 15 files.",
        ],
    )


def test_dl102_follows_the_method_resolution_order_past_the_mixins_default(make_tree: MakeTree) -> None:
    """Red-team 53: a declaring mixin listed after MultimodalModelMixin (whose default wins at run
    time) was taken as the model's declaration. Python's C3 order decides: in a diamond whose
    two branches share the mixin, the declaring branch comes before the mixin."""
    mixin_default = "    encoder_attention_backends = {}\n"  # the model mixin's own default, as in TensorRT-LLM
    source = IMPORTS + (
        "\n\nclass ConfigurableVision:\n"
        '    encoder_attention_backends = {"vision": ("VANILLA", "TRTLLM")}\n\n\n'
        + registered("hidden", "image")
        + "class Hidden(MultimodalModelMixin, ConfigurableVision):\n    pass\n\n\n"
        + registered("first", "image")
        + "class First(ConfigurableVision, MultimodalModelMixin):\n    pass\n\n\n"
        "class Plain(MultimodalModelMixin):\n    pass\n\n\n"
        "class Declaring(MultimodalModelMixin):\n"
        '    encoder_attention_backends = {"vision": ("TRTLLM",)}\n\n\n'
        + registered("diamond", "image")
        + "class Diamond(Plain, Declaring):\n    pass\n"
    )
    mixin = (
        "class FixedEncoderAttention:\n    def __init__(self, reason=''):\n        self.reason = reason\n\n\n"
        "class MultimodalModelMixin:\n" + mixin_default
    )
    root = make_tree(
        {
            "tensorrt_llm/llmapi/llm_args.py": LLM_ARGS,
            "tensorrt_llm/_torch/models/modeling_multimodal_mixin.py": mixin,
            MODEL + "modeling_mro.py": source,
        }
    )
    code, lines = check("--select", "DL102", str(root))
    assert (code, lines) == (
        1,
        [
            'tensorrt_llm/_torch/models/modeling_mro.py:12:7: DL102 multimodal model "Hidden" has no '
            'encoder_attention_backends declaration at run time: the default of "MultimodalModelMixin" comes '
            'first in its method resolution order and hides the declaration of "ConfigurableVision"; declare its '
            "encoders: vision (registered modalities: image)",
            'tensorrt_llm/_torch/models/modeling_mro.py:21:7: DL102 multimodal model "Plain" has no '
            "encoder_attention_backends declaration (own or inherited); declare its encoders, or {} when it has "
            "no attention encoder",
            "Found 2 findings in 15 files.",
        ],
    )


def test_dl106_red_team_60_siblings_constants_and_aliases_kept_before_a_rebinding(make_tree: MakeTree) -> None:
    """A sub-encoder or projector given a config of its own builds no layer that takes this
    encoder's metadata (only calls named like an attention layer do); one backend pinned as a
    constant and as a string is one; a local that took `self.config` before it was rebound keeps
    the config it took."""
    sub_encoder = (
        "class AudioEncoder:\n"
        "    def __init__(self, config):\n"
        "        self.attn = Attention(config=config)\n"
        "        self.metadata_cls = get_attention_backend(config.attn_backend).Metadata\n\n\n"
    )
    source = (
        ENCODER_HEAD
        + sub_encoder
        + "".join(
            [
                encoder(  # a sub-encoder with metadata of its own beside the override: consistent
                    "WithSubEncoder",
                    "vision_config = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                    'audio_config = dataclasses.replace(model_config, attn_backend="VANILLA")',
                    "self.attn = Attention(config=vision_config)",
                    "self.audio = AudioEncoder(audio_config)",
                    "self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata",
                ),
                encoder(  # one backend, as the Literal-typed constant and as a string: consistent
                    "OnePin",
                    "vision_config = dataclasses.replace(model_config, attn_backend=BACKEND_TRTLLM)",
                    'merger_config = dataclasses.replace(model_config, attn_backend="TRTLLM")',
                    "self.attn = Attention(config=vision_config)",
                    "self.merger = Attention(config=merger_config)",
                    "self.metadata_cls = get_attention_backend(vision_config.attn_backend).Metadata",
                ),
                encoder(  # the local took the LLM's config before self.config was rebound: reported
                    "AliasBefore",
                    "self.config = model_config",
                    "llm_config = self.config",
                    "self.config = dataclasses.replace(model_config, attn_backend=encoder_backend)",
                    "self.attn = Attention(config=self.config)",
                    "self.metadata_cls = get_attention_backend(llm_config.attn_backend).Metadata",
                ),
            ]
        )
    )
    root = make_tree({"tensorrt_llm/llmapi/llm_args.py": LLM_ARGS, "tensorrt_llm/_torch/models/encoders.py": source})
    code, lines = check("--select", "DL106", str(root))
    assert (code, lines) == (
        1,
        [
            "tensorrt_llm/_torch/models/encoders.py:39:29: DL106 AliasBefore takes its metadata class from "
            "llm_config's attn_backend, but builds its attention layers from self.config, whose attn_backend is "
            "overridden (line 37): with a per-encoder override the layers get metadata of another backend "
            "(AttributeError at the first forward); derive both from self.config",
            "Found 1 finding in 15 files.",
        ],
    )
