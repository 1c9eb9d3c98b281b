"""The runtime shim on CPU: every check raises in enforce, logs in warn, writes JSON in record;
static/runtime parity on the demo; install/uninstall; activation; 32 threads; backends recorded at
creation against the walk."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from declint import runtime_shim as shim  # noqa: E402
from declint.cli import cli  # noqa: E402
from tests.conftest import DEMO, REPO, copy_project  # noqa: E402
from tests.shim_fixtures.demo_models import (  # noqa: E402
    ENCODER_CALLS,
    flashinfer_importable,
    import_models,
    model_config,
    run_encoder,
    vanilla_declared_for_glm5,
)


@pytest.fixture
def models() -> Iterator[dict[str, type]]:
    classes = import_models()
    yield classes
    shim.uninstall()


# (model, overrides, config extras) -> (code, check) the shim must report before/at construction.
CASES = {
    "undeclared-backend": ("Glm5NextVModel", {"vision": "VANILLA"}, {}, ("DL104", "undeclared-backend")),
    "fixed-encoder": ("Gemma4Model", {"audio": "VANILLA"}, {}, ("DL104", "fixed-encoder-override")),
    "encoder-free": ("Gemma4UnifiedModel", {"vision": "TRTLLM"}, {}, ("DL104", "encoder-free-override")),
    "no-such-encoder": ("Qwen3VLModel", {"audio": "TRTLLM"}, {}, ("DL104", "unknown-encoder-override")),
    "flashinfer-missing": ("Qwen3VLModel", {"vision": "FLASHINFER"}, {}, ("DL105", "flashinfer-missing")),
    "vanilla-cuda-graph": (
        "Qwen3VLModel",
        {"vision": "VANILLA"},
        {"cuda_graph": True},
        ("DL105", "host-boundaries-cuda-graph"),
    ),
    "kv-cache-quant": ("Qwen3VLModel", {"vision": "VANILLA"}, {"kv_cache_quant": "FP8"}, ("DL105", "kv-cache-quant")),
    "ignored-override": ("Step3p7VLModel", {"vision": "VANILLA"}, {}, ("DL101", "override-ignored")),
    "missing-declaration": ("LlavaNextModel", None, {}, ("DL102", "declaration")),
    "missing-encoder": ("Phi4MMModel", None, {}, ("DL102", "declaration")),
    "invalid-declaration": ("KimiK25Model", None, {}, ("DL104", "declaration")),
}


LAYER_CHECKS = ("first-use", "construction")


def _build(models: dict[str, type], name: str, overrides: dict[str, str] | None, extra: dict[str, object]) -> Any:
    return models[name](model_config("TRTLLM", overrides, **extra))  # type: ignore[arg-type]


def _build_and_use(
    models: dict[str, type], name: str, overrides: dict[str, str] | None, extra: dict[str, object]
) -> Any:
    """Build the model, then load its (no) weights: its first use, where the layers are checked
    with layer_check="first-use" (with "construction" they were checked at the end of __init__)."""
    model = _build(models, name, overrides, extra)
    model.load_weights({})
    return model


@pytest.mark.parametrize("layer_check", LAYER_CHECKS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_check_raises_in_enforce(models: dict[str, type], case: str, layer_check: Any) -> None:
    name, overrides, extra, expected = CASES[case]
    shim.install("enforce", layer_check=layer_check)
    with pytest.raises(shim.ShimError) as caught:
        _build_and_use(models, name, overrides, extra)
    assert [(v.code, v.check) for v in caught.value.violations] == [expected]


@pytest.mark.parametrize("layer_check", LAYER_CHECKS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_check_logs_in_warn(
    models: dict[str, type], case: str, layer_check: Any, caplog: pytest.LogCaptureFixture
) -> None:
    name, overrides, extra, (code, _) = CASES[case]
    shim.install("warn", layer_check=layer_check)
    # contextlib.suppress: the demo's own late check, since warn lets construction go on
    with caplog.at_level(logging.WARNING, logger="declint.runtime_shim"), contextlib.suppress(ValueError):
        _build_and_use(models, name, overrides, extra)
    assert [r.getMessage().split()[0] for r in caplog.records] == [code]


@pytest.mark.parametrize("layer_check", LAYER_CHECKS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_each_check_writes_json_in_record(models: dict[str, type], case: str, layer_check: Any, tmp_path: Path) -> None:
    name, overrides, extra, (code, check) = CASES[case]
    report = tmp_path / "shim.jsonl"
    shim.install("record", report, layer_check=layer_check)
    with contextlib.suppress(ValueError):
        _build_and_use(models, name, overrides, extra)
    (record,) = [json.loads(line) for line in report.read_text().splitlines()]
    assert (record["code"], record["check"], record["model"], record["schema_version"]) == (code, check, name, 1)


def test_exact_messages(models: dict[str, type]) -> None:
    shim.install("enforce")
    with pytest.raises(shim.ShimError) as caught:
        _build(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
    assert str(caught.value) == (
        "declint runtime shim: DL104 the vision encoder of Glm5NextVModel supports TRTLLM, not VANILLA "
        '(encoder_attention_backend["vision"])'
    )
    with pytest.raises(shim.ShimError) as caught:
        models["KimiK25Model"](model_config())
    assert caught.value.violations[0].message == (
        'encoder "vision": "FLASHINFR" is not a member of EncoderAttentionBackend (did you mean "FLASHINFER"?)'
    )


def test_unknown_backend_name_is_rejected_with_a_suggestion(models: dict[str, type]) -> None:
    from tensorrt_llm._torch.attention_backend import utils

    shim.install("enforce")
    with pytest.raises(shim.ShimError) as caught:
        utils.get_attention_backend("FLASHINFR")
    assert caught.value.codes == ("DL104",)
    assert 'did you mean "FLASHINFER"?' in str(caught.value)
    shim.uninstall()
    assert utils.get_attention_backend("FLASHINFR").__name__ == "TrtllmAttention"  # today's silent fallback


def test_valid_override_builds_and_layers_follow_it(models: dict[str, type]) -> None:
    shim.install("enforce")
    model = _build(models, "Qwen3VLModel", {"vision": "VANILLA"}, {})
    assert type(model.visual.blocks[0].attn.attn).__name__ == "VanillaAttention"  # type: ignore[attr-defined]
    run_encoder(model)
    assert shim.violations() == ()


def test_disabled_encoder_skips_presence_with_one_info_but_checks_declaration(
    models: dict[str, type], caplog: pytest.LogCaptureFixture
) -> None:
    shim.install("enforce")
    with caplog.at_level(logging.INFO, logger="declint.runtime_shim"):
        _build(models, "Qwen3VLModel", None, {"disable_encoder": True})
        _build(models, "Qwen3VLModel", None, {"disable_encoder": True})
    assert [r.levelname for r in caplog.records] == ["INFO"]
    assert "encoder-presence checks skipped" in caplog.records[0].getMessage()
    with pytest.raises(shim.ShimError):
        _build(models, "KimiK25Model", None, {"disable_encoder": True})


@pytest.mark.parametrize("layer_check", LAYER_CHECKS)
def test_ignored_override_after_construction(models: dict[str, type], layer_check: Any) -> None:
    from tensorrt_llm._torch.models import modeling_glm5_next

    # Declare VANILLA for GLM5 for this test: its sub-config still pins TRTLLM, ignoring the override.
    original = modeling_glm5_next.Glm5NextVModel.encoder_attention_backends
    modeling_glm5_next.Glm5NextVModel.encoder_attention_backends = {"vision": ("TRTLLM", "VANILLA")}
    try:
        shim.install("enforce", layer_check=layer_check)
        with pytest.raises(shim.ShimError) as caught:
            _build_and_use(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
    finally:
        modeling_glm5_next.Glm5NextVModel.encoder_attention_backends = original
    assert [(v.code, v.check) for v in caught.value.violations] == [("DL106", "override-ignored")]
    assert "layer visual.blocks.0.attn.attn was built with TrtllmAttention" in str(caught.value)


IGNORED = "layer visual.blocks.0.attn.attn was built with TrtllmAttention"


def test_first_use_builds_without_walking_and_checks_before_the_weights_load(
    models: dict[str, type], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensorrt_llm._torch.attention_backend.interface import AttentionBackend

    from declint.runtime_shim import checks

    original = vars(AttentionBackend)["__init__"]
    shim.install("enforce")
    assert vars(AttentionBackend)["__init__"] is original  # no per-layer code during a construction
    with vanilla_declared_for_glm5():
        for name in ("backend_layers", "after_construction", "locate_encoders"):
            monkeypatch.setattr(checks, name, lambda *args, name=name: pytest.fail(f"{name} ran during __init__"))
        model = _build(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
        monkeypatch.undo()
        assert shim.violations() == ()
        weight = next(iter(model.state_dict()))
        checkpoint = {weight: torch.full_like(model.state_dict()[weight], 7.0)}
        with pytest.raises(shim.ShimError) as caught:
            model.load_weights(checkpoint)
        assert [(v.code, v.check, v.model) for v in caught.value.violations] == [
            ("DL106", "override-ignored", "Glm5NextVModel")
        ]
        assert IGNORED in str(caught.value)
        assert not bool((model.state_dict()[weight] == 7.0).all())  # raised before loading anything
        assert not model._forward_pre_hooks  # the first-forward trigger went with the check
        model.load_weights(checkpoint)  # each model is checked once
        assert bool((model.state_dict()[weight] == 7.0).all())
    assert len(shim.violations()) == 1


def test_first_use_by_a_forward_checks_before_the_forward_runs(models: dict[str, type]) -> None:
    shim.install("enforce")
    with vanilla_declared_for_glm5():
        model = _build(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
        assert len(model._forward_pre_hooks) == 1
        with pytest.raises(shim.ShimError, match=IGNORED):
            model("not", "inputs")  # the forward itself would fail on these: it never ran
    assert not model._forward_pre_hooks


def test_first_use_by_an_encoder_metadata_checks_that_encoders_model_only(models: dict[str, type]) -> None:
    shim.install("enforce")
    with vanilla_declared_for_glm5():
        fine = _build(models, "Qwen3VLModel", {"vision": "TRTLLM"}, {})
        ignored = _build(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
        with pytest.raises(shim.ShimError) as caught:
            ignored.visual.setup_attn_metadata(4, 64)
        assert [(v.code, v.model) for v in caught.value.violations] == [("DL106", "Glm5NextVModel")]
        assert ignored.visual.attn_metadata is None  # before the metadata was created
        assert len(fine._forward_pre_hooks) == 1  # still waiting for its own first use
        fine.load_weights({})
    assert not fine._forward_pre_hooks
    assert len(shim.violations()) == 1


def test_a_model_never_used_is_never_checked_and_not_kept_alive(models: dict[str, type]) -> None:
    import gc
    import weakref

    shim.install("enforce")
    with vanilla_declared_for_glm5():
        model = _build(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
    alive = weakref.ref(model)
    del model
    gc.collect()
    assert alive() is None
    assert shim.violations() == ()


def test_a_waiting_model_can_be_copied_and_pickled_and_uninstall_takes_its_hook(models: dict[str, type]) -> None:
    import copy
    import pickle

    shim.install("enforce")
    with vanilla_declared_for_glm5():
        model = _build(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
        twin = copy.deepcopy(model)  # the hook is a plain function: the shim is not copied with it
        assert pickle.loads(pickle.dumps(model)).visual.blocks[0].attn.attn.num_heads == 2
        twin.load_weights({})  # the copy never waited for a first use
        with pytest.raises(shim.ShimError, match=IGNORED):
            model.load_weights({})
        assert len(shim.violations()) == 1
        waiting = _build(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
        shim.uninstall()
    assert not waiting._forward_pre_hooks
    with pytest.raises(AttributeError, match="'str' object has no attribute 'device'"):
        waiting("not", "inputs")  # the model's own forward ran: no shim code before it


def test_a_subclass_with_its_own_load_weights_is_checked_before_it_loads(models: dict[str, type]) -> None:
    loaded: list[object] = []

    def load_weights(self: Any, weights: object) -> None:  # no super(): the subclass loads by itself
        loaded.append(weights)

    cls = type("OwnLoad", (models["Glm5NextVModel"],), {"load_weights": load_weights})  # inherits __init__
    shim.install("enforce")
    with vanilla_declared_for_glm5():
        model = cls(model_config("TRTLLM", {"vision": "VANILLA"}))
        with pytest.raises(shim.ShimError, match=IGNORED):
            model.load_weights({})
    assert loaded == []


def test_a_load_weights_that_is_not_a_method_is_left_alone(models: dict[str, type]) -> None:
    base = models["Qwen3VLModel"]
    loaded: list[object] = []

    def load(weights: object) -> None:
        loaded.append(weights)

    cls = type("StaticLoad", (base,), {"load_weights": staticmethod(load)})
    shim.install("enforce")
    model = cls(model_config("TRTLLM", {"vision": "TRTLLM"}))
    assert vars(cls)["load_weights"].__func__ is load  # type: ignore[attr-defined]
    model.load_weights({})
    assert loaded == [{}]
    assert len(model._forward_pre_hooks) == 1  # still waiting: the forward is its first use


def test_layer_check_from_the_environment(tmp_path: Path) -> None:
    code = (
        "from tests.shim_fixtures.demo_models import import_models, model_config\n"
        "import declint.runtime_shim as s\n"
        "import_models()\n"
        "print(s.status().layer_check, {t.key: t.state for t in s.status().targets}.get('attention-backend-base'))\n"
    )
    outputs = []
    for value in ("", "construction", "later"):
        env = _env(DECLINT_RUNTIME_SHIM="enforce", DECLINT_RUNTIME_SHIM_LAYER_CHECK=value)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO)
        said = [line for line in done.stderr.splitlines() if line.startswith("declint")]
        outputs.append((done.returncode, done.stdout.splitlines(), said))
    assert outputs == [
        (0, ["first-use found"], []),
        (0, ["construction patched"], []),
        (
            0,
            ["None None"],
            [
                "declint runtime shim: DECLINT_RUNTIME_SHIM_LAYER_CHECK='later' is not one of first-use, "
                "construction; not installed"
            ],
        ),
    ]


def test_an_unknown_layer_check_is_refused(models: dict[str, type]) -> None:
    with pytest.raises(ValueError, match="layer_check must be one of first-use, construction, got 'eager'"):
        shim.install("enforce", layer_check="eager")  # type: ignore[arg-type]
    assert shim.status().installed is False


def test_metadata_mismatch_is_caught_at_setup_not_at_the_first_forward(models: dict[str, type]) -> None:
    with flashinfer_importable():
        from tests.shim_fixtures.skew_models import SkewVLModel, tokens

        model = SkewVLModel(model_config("TRTLLM", {"vision": "FLASHINFER"}))
        model.visual.setup_attn_metadata(4, 64)
        with pytest.raises(AttributeError, match="'TrtllmAttentionMetadata' object has no attribute 'kv_layout'"):
            model.visual(tokens(model))
        shim.install("enforce")
        model = SkewVLModel(model_config("TRTLLM", {"vision": "FLASHINFER"}))
        with pytest.raises(shim.ShimError) as caught:
            model.visual.setup_attn_metadata(4, 64)
    assert caught.value.codes == ("DL106", "DL105")
    assert model.visual.attn_metadata is None
    assert caught.value.violations[1].message.startswith(
        "FlashInferAttention reads metadata.kv_layout, metadata.plan, metadata.get_ragged_prefill_wrapper"
    )
    assert "which TrtllmAttentionMetadata does not provide; FlashInferAttentionMetadata provides them" in str(
        caught.value
    )
    # The record's location: the first read the message names, in the backend's own file.
    backend_file = REPO / "examples/mini_trtllm/tensorrt_llm/_torch/attention_backend/flashinfer.py"
    first = next(i for i, line in enumerate(backend_file.read_text().splitlines(), 1) if "metadata.kv_layout" in line)
    assert caught.value.violations[1].location == f"{backend_file}:{first}"


def test_sdpa_probe_reports_dl101_once_and_detaches(models: dict[str, type]) -> None:
    shim.install("record", probe_sdpa=True)
    model = _build(models, "Step3p7VLModel", None, {})
    run_encoder(model)
    run_encoder(model)
    (found,) = shim.violations()
    assert (found.code, found.check, found.location.endswith("modeling_step3vl.py:59")) == ("DL101", "sdpa-probe", True)
    assert not model.vision_model._forward_pre_hooks  # type: ignore[attr-defined]


def _static_pairs() -> set[tuple[str, str]]:
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--select", "DL101,DL102,DL104", str(DEMO)])
    classes = import_models()
    pairs = set()
    for finding in json.loads(result.output)["findings"]:
        context = finding["context"].split(".")[0]
        model = context if context in classes else ""
        if finding["code"] == "DL101":  # the message names the owning model
            model = finding["message"].split("but ", 1)[1].split(" declares")[0]
        pairs.add((model, finding["code"]))
    return pairs


def test_parity_static_and_runtime_give_the_same_codes_on_the_demo_models(models: dict[str, type]) -> None:
    from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin

    shim.install("record", probe_sdpa=True)
    for name, cls in sorted(models.items()):
        if issubclass(cls, MultimodalModelMixin) and cls is not MultimodalModelMixin:
            model = cls(model_config())
            if name in ENCODER_CALLS:
                run_encoder(model)
    runtime = {(v.model, v.code) for v in shim.violations()}
    assert runtime == _static_pairs()
    assert {code for _, code in runtime} == {"DL101", "DL102", "DL104"}


def test_install_twice_uninstall_twice_is_harmless(models: dict[str, type]) -> None:
    from tensorrt_llm._torch.attention_backend import utils
    from tensorrt_llm._torch.models import modeling_qwen3vl

    original_init = vars(modeling_qwen3vl.Qwen3VLModel)["__init__"]
    original_lookup = utils.get_attention_backend
    shim.install("enforce")
    wrapped = vars(modeling_qwen3vl.Qwen3VLModel)["__init__"]
    shim.install("enforce")
    assert vars(modeling_qwen3vl.Qwen3VLModel)["__init__"] is wrapped
    assert wrapped.__wrapped__ is original_init
    shim.uninstall()
    shim.uninstall()
    assert vars(modeling_qwen3vl.Qwen3VLModel)["__init__"] is original_init
    assert utils.get_attention_backend is original_lookup
    assert shim.status().installed is False


def test_uninstall_restores_the_bindings_of_a_module_imported_while_installed(models: dict[str, type]) -> None:
    """That module ran `from ...utils import get_attention_backend` while the shim was in place:
    its name held the wrapper, which kept enforcing after `uninstall()` (red-team, 2026-12-02)."""
    from tensorrt_llm._torch.attention_backend import utils
    from tensorrt_llm._torch.models import modeling_utils

    name = "tensorrt_llm._torch.models.modeling_qwen3vl"
    lookup, register = utils.get_attention_backend, modeling_utils.register_input_processor
    saved = sys.modules.pop(name)
    try:
        shim.install("enforce")
        fresh = importlib.import_module(name)
        assert hasattr(fresh.get_attention_backend, "__wrapped__")  # the wrapper, copied at import
        shim.uninstall()
        assert (fresh.get_attention_backend, fresh.register_input_processor) == (lookup, register)
        # The stand-in's own answer to an unknown name (a fallback, as TensorRT-LLM's), no ShimError.
        assert fresh.get_attention_backend("FLASHINFR") is lookup("TRTLLM")
    finally:
        sys.modules[name] = saved


def test_a_kv_cache_quantization_is_refused_before_any_module_of_a_model_that_builds_its_llm_first(
    models: dict[str, type], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemma 4 builds its LLM before its vision tower: checked where the tower's config was
    derived, the LLM's weights were allocated already (red-team, 2026-12-02)."""
    created: list[str] = []
    original = torch.nn.Module.__init__

    def counting(module: Any, *args: Any, **kwargs: Any) -> None:
        created.append(type(module).__name__)
        original(module, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "__init__", counting)
    shim.install("enforce")
    with pytest.raises(shim.ShimError) as caught:
        _build(models, "Gemma4Model", {"vision": "VANILLA"}, {"kv_cache_quant": "FP8"})
    assert [(v.code, v.check, v.encoder) for v in caught.value.violations] == [("DL105", "kv-cache-quant", "vision")]
    assert created == []


def test_the_llm_may_use_a_backend_outside_the_encoder_literal_that_get_attention_backend_accepts(
    models: dict[str, type],
) -> None:
    """FLASHINFER_STAR_ATTENTION is accepted by the wrapped get_attention_backend, and was refused as
    the LLM's attn_backend before every multimodal model's __init__ (red-team, 2026-12-02)."""
    from tensorrt_llm._torch.attention_backend import utils

    shim.install("enforce")
    utils.get_attention_backend("FLASHINFER_STAR_ATTENTION")
    model = _build(models, "Qwen3VLModel", None, {})
    assert model is not None and list(shim.violations()) == []
    models["Qwen3VLModel"](model_config("FLASHINFER_STAR_ATTENTION"))
    assert list(shim.violations()) == []
    with pytest.raises(shim.ShimError) as caught:  # a name neither knows is still refused
        models["Qwen3VLModel"](model_config("FLASHINFER_STAR"))
    assert [(v.code, v.check) for v in caught.value.violations] == [("DL104", "unknown-backend")]


CONTRACT_PROBE = """\
class ProbeMetadata:
    page_size = 1


class Backend:
    def plan(self, md: ProbeMetadata, metadata):
        return md.kv_layout, metadata.unjudged

    def forward(self, q, metadata):
        if not hasattr(metadata, "workspace"):
            return metadata.workspace
        if hasattr(metadata, "guarded"):
            return metadata.guarded
        return metadata.page_size
"""


def test_the_runtime_contract_reads_what_the_static_rule_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The static rule's reads and guards: the shim left out an annotated metadata parameter's
    reads outside `forward*` (a static DL105 that passed at run time) and took a `hasattr`
    anywhere in a method as a guard, even in the body of `if not hasattr(...)` (red-team,
    2026-12-02)."""
    from declint.runtime_shim import contract

    (tmp_path / "declint_contract_probe.py").write_text(CONTRACT_PROBE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = importlib.import_module("declint_contract_probe")
    assert contract.reads(probe.Backend) == (("kv_layout", 7), ("workspace", 11), ("page_size", 14))
    assert contract.missing(probe.Backend, probe.ProbeMetadata) == ("kv_layout", "workspace")
    assert contract.location(probe.Backend, "workspace") == f"{tmp_path / 'declint_contract_probe.py'}:11"
    project = tmp_path / "project"
    (project / "tensorrt_llm/_torch/attention_backend").mkdir(parents=True)
    backend = CONTRACT_PROBE.replace(
        "class Backend:", "class Backend(AttentionBackend[ProbeMetadata]):\n    Metadata = ProbeMetadata\n"
    )
    backend = backend.replace("class ProbeMetadata:", "class ProbeMetadata(AttentionMetadata):")
    head = "from .interface import AttentionBackend, AttentionMetadata\n\n\n"
    (project / "tensorrt_llm/_torch/attention_backend/probe.py").write_text(head + backend, encoding="utf-8")
    (project / "tensorrt_llm/_torch/attention_backend/interface.py").write_text(
        "class AttentionMetadata:\n    pass\n\n\nclass AttentionBackend:\n    pass\n", encoding="utf-8"
    )
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--select", "DL105", "--format", "json", str(project)])
    findings = json.loads(result.output)["findings"]
    reads = sorted(f["message"].split(" reads ")[1].split(",")[0] for f in findings)
    assert reads == ["md.kv_layout", "metadata.workspace"]


def test_the_runtime_contract_takes_getattr_as_providing_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A metadata class whose base defines `__getattr__` may answer any read, as the static DL105
    says: nothing is missing (the same class without that base misses two, in the test above)."""
    from declint.runtime_shim import contract

    probe = CONTRACT_PROBE.replace("class ProbeMetadata:", "class ProbeMetadata(LazyBase):")
    lazy = "class LazyBase:\n    def __getattr__(self, name):\n        return None\n\n\n"
    (tmp_path / "declint_lazy_probe.py").write_text(lazy + probe, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("declint_lazy_probe")
    assert contract.provided(module.ProbeMetadata) is None
    assert contract.missing(module.Backend, module.ProbeMetadata) == ()
    # On the metadata base every metadata class shares, a __getattr__ answers nothing new.
    shared = "class AttentionMetadata:\n    def __getattr__(self, name):\n        raise AttributeError(name)\n\n\n"
    probe = CONTRACT_PROBE.replace("class ProbeMetadata:", "class ProbeMetadata(AttentionMetadata):")
    (tmp_path / "declint_shared_probe.py").write_text(shared + probe, encoding="utf-8")
    module = importlib.import_module("declint_shared_probe")
    assert contract.missing(module.Backend, module.ProbeMetadata) == ("kv_layout", "workspace")
    # Under another metadata base name (Conventions.metadata_base, declint's metadata-base), that
    # class is one of the metadata class's own: its __getattr__ may answer anything.
    assert contract.missing(module.Backend, module.ProbeMetadata, "BaseMetadata") == ()
    # Named by its dotted path, as declint's metadata-base may name it, it is the same base.
    dotted = "declint_shared_probe.AttentionMetadata"
    assert contract.missing(module.Backend, module.ProbeMetadata, dotted) == ("kv_layout", "workspace")


def test_the_shim_tells_encoders_by_name_as_the_linter_does() -> None:
    """Same hints as declint's encoder-name-hints default, and the same reading (declint.hints):
    of the hints in a name, the one that ends last, its head noun, decides; no hint is vision."""
    from declint.config import OPTIONS
    from declint.runtime_shim.conventions import Conventions

    conventions = Conventions()
    default = next(spec.default for spec in OPTIONS if spec.key == "encoder-name-hints")
    assert dict(conventions.encoder_name_hints) == {encoder: tuple(hints) for encoder, hints in default.items()}
    named = ("WhisperEncoder", "SigLIPEncoder", "ImageBindAudioEncoder", "AudioVisualEncoder", "PatchMerger")
    assert [conventions.encoder_from_name(name) for name in named] == ["audio", "vision", "audio", "vision", "vision"]
    # Nemotron Nano's audio tower (red-team 48)
    assert [conventions.encoder_from_name(name) for name in ("ProjectedParakeet", "HFParakeetEncoder")] == [
        "audio",
        "audio",
    ]
    # A hint counts where it starts a word: "vision" inside "Subdivision" or "Televisionary" does not.
    assert conventions.encoder_from_name("ConformerSubdivisionAttention") == "audio"
    assert conventions.encoder_from_name("TelevisionaryAudio") == "audio"
    # In a run of capitals the words are not told: a hint anywhere in it counts.
    assert conventions.encoder_from_name("CLAPAUDIOEncoder") == "audio"
    # With only audio hints configured, a name holding one is audio's.
    assert Conventions(encoder_name_hints=(("audio", ("audio",)),)).encoder_from_name("ImageAudio") == "audio"


def test_a_declaration_no_entry_of_which_can_be_read_is_not_an_encoder_free_one() -> None:
    """`{"visoin": ...}` on an image model misses "vision" (as DL102 says statically), and neither
    it nor a list is `{}`: an override was refused as "declares no attention encoder ({})"."""
    from declint.runtime_shim import checks
    from declint.runtime_shim.conventions import Conventions
    from declint.runtime_shim.declarations import model_facts

    conventions, members = Conventions(), ("VANILLA", "TRTLLM", "FLASHINFER")
    mixin = type("MultimodalModelMixin", (), {})
    override = checks.Selection(overrides={"vision": "VANILLA"}, default=None, disabled=False, cuda_graph=False)

    def judged(declaration: object) -> list[tuple[str, str, str]]:
        model = type("Model", (mixin,), {"encoder_attention_backends": declaration})
        facts = model_facts(model, conventions, members, (("image",), model))
        return [(v.code, v.check, v.message) for v in checks.before_construction(facts, override, members, conventions)]

    unknown = 'unknown encoder "visoin" (did you mean "vision"?); known encoders: vision, audio'
    assert judged({"visoin": ("TRTLLM",)}) == [
        ("DL104", "declaration", unknown),
        ("DL102", "declaration", 'the declaration of "Model" misses encoder "vision" (registered modality "image")'),
    ]
    not_a_dict = "encoder_attention_backends must be a dict mapping encoder names to backends"
    assert judged(["vision"]) == [("DL104", "declaration", not_a_dict)]
    marker = type("FixedEncoderAttention", (), {"__init__": lambda self, reason: setattr(self, "reason", reason)})
    assert judged({"vision": marker(1)}) == [  # as DL104 says it statically (red-team, 2026-12-02)
        ("DL104", "declaration", 'encoder "vision": the reason of FixedEncoderAttention must be a string, not 1'),
        (
            "DL104",
            "fixed-encoder-override",
            "the vision encoder of Model has fixed attention (no reason given); remove the "
            'encoder_attention_backend["vision"] override',
        ),
    ]
    free = "Model declares no attention encoder (encoder_attention_backends = {}); remove the"
    assert judged({}) == [("DL104", "encoder-free-override", f'{free} encoder_attention_backend["vision"] override')]


def test_status_reports_every_target(models: dict[str, type]) -> None:
    status = shim.install("warn")
    assert {t.key: t.state for t in status.targets}["get-attention-backend"] == "patched"
    assert all(t.state in ("patched", "found") for t in status.targets)


def test_missing_target_warns_once_or_fails_when_strict(
    models: dict[str, type], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensorrt_llm._torch.models import modeling_multimodal_encoder as module

    monkeypatch.delattr(module.MultimodalEncoderMixin, "prepare_attn_metadata")
    with pytest.warns(shim.ShimTargetWarning, match="metadata-bind"):
        status = shim.install("enforce")
    assert {t.key: t.state for t in status.targets}["metadata-bind"] == "missing"
    shim.uninstall()
    with pytest.raises(shim.ShimTargetError, match="metadata-bind"):
        shim.install("enforce", strict=True)
    assert shim.status().installed is False


def test_importing_the_shim_has_no_side_effects() -> None:
    code = (
        "import sys; import declint.runtime_shim as s; "
        "print(sorted(m for m in ('torch', 'libcst', 'click') if m in sys.modules), s.status().installed)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_env())
    assert done.stdout == "[] False\n"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DECLINT_RUNTIME_SHIM")}
    return {**env, "PYTHONPATH": str(REPO), **extra}


def test_environment_variable_activates_the_shim_through_the_startup_hook(tmp_path: Path) -> None:
    code = (
        "from tests.shim_fixtures.demo_models import import_models, model_config\n"
        "import declint.runtime_shim as s\n"
        "m = import_models()\n"
        "try: m['Glm5NextVModel'](model_config('TRTLLM', {'vision': 'VANILLA'}))\n"
        "except ValueError: pass\n"
        "print(s.status().activated_by, s.status().mode)\n"
    )
    report = tmp_path / "r.jsonl"
    env = _env(DECLINT_RUNTIME_SHIM="record", DECLINT_RUNTIME_SHIM_REPORT=str(report))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, check=False)
    assert done.stdout.splitlines()[-1] == "environment record", done.stderr
    assert [json.loads(line)["code"] for line in report.read_text().splitlines()] == ["DL104"]
    bad = subprocess.run(
        [sys.executable, "-c", "pass"],
        capture_output=True,
        text=True,
        env=_env(DECLINT_RUNTIME_SHIM="loud"),
        check=False,
    )
    assert (bad.returncode, "is not one of enforce, warn, record" in bad.stderr) == (0, True)


def test_pytest_plugin_option(tmp_path: Path) -> None:
    test = tmp_path / "test_model.py"
    test.write_text(
        "from tests.shim_fixtures.demo_models import import_models, model_config\n"
        "def test_build():\n"
        "    import_models()['Gemma4Model'](model_config('TRTLLM', {'audio': 'VANILLA'}))\n"
        "def test_layer_check():\n"
        "    import declint.runtime_shim as s\n"
        "    assert s.status().layer_check in (None, 'construction')\n"
    )
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test), "--rootdir", str(tmp_path)]
    plain = subprocess.run(args, capture_output=True, text=True, env=_env(), cwd=REPO, check=False)
    assert plain.returncode == 0, plain.stdout
    enforced = subprocess.run(
        [*args, "--declint-shim=enforce", "--declint-shim-layer-check=construction"],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=REPO,
    )
    assert enforced.returncode == 1
    assert "ShimError: declint runtime shim: DL104" in enforced.stdout
    assert "1 failed, 1 passed" in enforced.stdout  # test_layer_check: the option reached install()


@pytest.mark.parametrize("layer_check", LAYER_CHECKS)
def test_32_threads_constructing_models_for_10_seconds(models: dict[str, type], layer_check: Any) -> None:
    shim.install("enforce", layer_check=layer_check)
    torch.set_num_threads(1)
    errors: list[BaseException] = []
    built = [0] * 32
    deadline = time.monotonic() + 10

    def work(index: int) -> None:
        try:
            while time.monotonic() < deadline:
                _build_and_use(models, "Qwen3VLModel", {"vision": "VANILLA" if index % 2 else "TRTLLM"}, {})
                with pytest.raises(shim.ShimError):
                    _build(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
                built[index] += 1
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)  # a liveness bound (deadlock), not a speed assertion
    assert not any(thread.is_alive() for thread in threads)
    assert errors == []
    assert all(count > 0 for count in built)


def test_shim_targets_command(tmp_path: Path) -> None:

    result = CliRunner().invoke(cli, ["shim-targets", str(DEMO)])
    assert (result.exit_code, result.output.splitlines()[-1]) == (0, "All 10 targets ok.")
    copy = tmp_path / "tree"
    copy_project(DEMO / "tensorrt_llm", copy / "tensorrt_llm")
    mixin = copy / "tensorrt_llm/_torch/models/modeling_multimodal_mixin.py"
    mixin.write_text(mixin.read_text().replace("model_config: ModelConfig, encoder: str", "encoder: str, model_config"))
    encoder = copy / "tensorrt_llm/_torch/models/modeling_multimodal_encoder.py"
    encoder.write_text(encoder.read_text().replace("def prepare_attn_metadata", "def prepare_metadata"))
    result = CliRunner().invoke(cli, ["shim-targets", "--format", "json", str(copy / "tensorrt_llm")])
    states = {row["key"]: (row["state"], row["detail"]) for row in json.loads(result.output)["targets"]}
    assert result.exit_code == 1
    assert states["encoder-config"] == (
        "incompatible",
        "expected leading parameters (model_config, encoder), found (encoder, model_config)",
    )
    assert states["metadata-bind"] == ("missing", "not found")
    assert sum(state == "ok" for state, _ in states.values()) == 8


REGISTRY = """INPUT_PROCESSOR_REGISTRY = {}


def register_input_processor(processor_cls, model_type, placeholder_metadata=None):
    def wrapper(model_cls):
        INPUT_PROCESSOR_REGISTRY[model_cls] = processor_cls
        return model_cls

    return wrapper
"""


def test_registration_in_the_inputs_registry_as_tensorrt_llm_has_it(tmp_path: Path) -> None:
    """TensorRT-LLM defines register_input_processor in tensorrt_llm.inputs.registry (models import
    it from tensorrt_llm.inputs); the stand-in in modeling_utils. Both are targets, statically and
    at runtime: Phi4MM's audio encoder is known only from its registration's placeholder_map."""
    copy = tmp_path / "tree"
    copy_project(DEMO / "tensorrt_llm", copy / "tensorrt_llm")
    inputs = copy / "tensorrt_llm" / "inputs"
    inputs.mkdir()
    (inputs / "registry.py").write_text(REGISTRY, encoding="utf-8")
    (inputs / "__init__.py").write_text("from .registry import register_input_processor\n", encoding="utf-8")
    utils = copy / "tensorrt_llm/_torch/models/modeling_utils.py"
    text = utils.read_text(encoding="utf-8").replace("def register_input_processor(", "def _stand_in_register(")
    utils.write_text(text + "\nfrom tensorrt_llm.inputs import register_input_processor  # noqa: E402\n")
    result = CliRunner().invoke(cli, ["shim-targets", "--format", "json", str(copy)])
    rows = {row["key"]: (row["state"], row["where"]) for row in json.loads(result.output)["targets"]}
    assert rows["model-registration"] == ("ok", "tensorrt_llm.inputs.registry.register_input_processor")
    assert result.exit_code == 0
    code = (
        "import sys\n"
        "from tests.shim_fixtures.demo_models import DEMO, model_config, use_demo\n"
        f"use_demo(); sys.path.remove(str(DEMO)); sys.path.insert(0, {str(copy)!r})\n"
        "import declint.runtime_shim as s\n"
        "s.install('enforce')\n"
        "from tensorrt_llm._torch.models.modeling_phi4mm import Phi4MMModel\n"
        "print({t.key: (t.state, t.where) for t in s.status().targets}['model-registration'])\n"
        "try:\n    Phi4MMModel(model_config('TRTLLM'))\n"
        "except s.ShimError as error:\n    print(error.violations[0].code, error.violations[0].message)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(), cwd=REPO, check=False
    )
    assert done.stdout.splitlines() == [
        "('patched', 'tensorrt_llm.inputs.registry.register_input_processor')",
        'DL102 the declaration of "Phi4MMModel" misses encoder "audio" (registered modality "audio")',
    ], done.stderr


# ---- backends recorded at creation (runtime_shim/recording.py) ------------------------------------
@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[dict[object, list[object]]]:
    """Each recorded construction's groups (top module -> backends), as finish() sees them."""
    from declint.runtime_shim.recording import Recorder

    seen: list[dict[object, list[object]]] = []
    done = Recorder.done

    def keep(recorder: Recorder) -> None:
        seen.append({group.module: list(group) for group in recorder.groups} if recorder.trusted else {})
        done(recorder)

    monkeypatch.setattr(Recorder, "done", keep)
    return seen


def _walked(module: object) -> list[object]:
    from tensorrt_llm._torch.attention_backend.interface import AttentionBackend

    from declint.runtime_shim import checks

    return [layer for _, layer in checks.backend_layers(module, AttentionBackend)]


def test_backends_are_recorded_under_the_encoder_being_built_and_nothing_is_walked(
    models: dict[str, type], recorded: list[dict[object, list[object]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    from declint.runtime_shim import checks

    shim.install("enforce", layer_check="construction")
    for name in ("backend_layers", "after_construction", "locate_encoders"):
        monkeypatch.setattr(checks, name, lambda *args, name=name: pytest.fail(f"{name} walked the model"))
    model = _build(models, "Qwen3VLModel", {"vision": "TRTLLM"}, {"depth": 3})
    (groups,) = recorded
    visual, llm = model.visual, model.llm  # type: ignore[attr-defined]
    monkeypatch.undo()
    assert list(groups) == [visual, llm]
    assert groups[visual] == _walked(visual) and len(groups[visual]) == 3  # the same objects, in walk order
    assert groups[llm] == _walked(llm)


def test_recording_and_walk_agree_on_every_demo_model(models: dict[str, type], monkeypatch: pytest.MonkeyPatch) -> None:
    """Differential: wherever the recording decides, the walk finds no violation and the same encoders."""
    from tensorrt_llm._torch.models.modeling_multimodal_mixin import MultimodalModelMixin

    from declint.runtime_shim import checks

    decided: list[str] = []
    recorded_check = checks.recorded_after_construction

    def both(model: Any, construction: Any, recorder: Any, *rest: Any) -> Any:
        fast = recorded_check(model, construction, recorder, *rest)
        base, mixin, resolve, names, conventions = rest
        violations, encoders = checks.after_construction(model, construction, base, mixin, resolve, names, conventions)
        if fast is not None:
            located, complete = fast
            assert violations == [], type(model).__name__
            assert all(item in encoders[e] for e, items in located.items() for item in items)
            assert located == encoders or not complete
            decided.append(type(model).__name__)
        return fast

    monkeypatch.setattr(checks, "recorded_after_construction", both)
    shim.install("record", layer_check="construction")
    variants = [None, {"vision": "TRTLLM"}, {"vision": "VANILLA"}, {"audio": "VANILLA"}, {"vision": "FLASHINFER"}]
    for cls in models.values():
        if not issubclass(cls, MultimodalModelMixin) or cls is MultimodalModelMixin:
            continue
        for attn_backend in ("TRTLLM", "VANILLA"):
            for overrides in variants:
                with contextlib.suppress(ValueError):  # the demo models' own late checks
                    cls(model_config(attn_backend, overrides))
    assert {"Qwen3VLModel", "Cosmos3Model", "Gemma4Model", "KimiK25Model"} <= set(decided)


def _qwen_subclass(models: dict[str, type], name: str, after: Any) -> type:
    """A Qwen3-VL whose __init__ runs `after(model, config)` once the model is built."""
    base = models["Qwen3VLModel"]

    def __init__(self: Any, model_config: Any) -> None:
        base.__init__(self, model_config)
        after(self, model_config)

    return type(name, (base,), {"__init__": __init__})


@pytest.mark.parametrize("layer_check", LAYER_CHECKS)
def test_a_backend_swapped_in_by_the_model_after_its_encoder_was_built_is_caught_as_by_the_walk(
    models: dict[str, type], layer_check: Any
) -> None:
    from tensorrt_llm._torch.attention_backend.vanilla import VanillaAttention

    made_before = VanillaAttention(3, 2, 16)  # not created during the construction: never recorded
    for name, replacement in (("SwapNew", lambda: VanillaAttention(3, 2, 16)), ("SwapOld", lambda: made_before)):
        cls = _qwen_subclass(models, name, lambda m, _, r=replacement: setattr(m.visual.blocks[1].attn, "attn", r()))
        shim.install("enforce", layer_check=layer_check)
        with pytest.raises(shim.ShimError) as caught:
            cls(model_config("TRTLLM", {"vision": "TRTLLM"}, depth=3)).load_weights({})
        shim.uninstall()
        assert [(v.code, v.check) for v in caught.value.violations] == [("DL106", "override-ignored")]
        assert "layer visual.blocks.1.attn.attn was built with VanillaAttention" in str(caught.value)


@pytest.mark.parametrize("layer_check", LAYER_CHECKS)
def test_a_layer_built_outside_its_encoder_and_attached_to_it_is_caught_as_by_the_walk(
    models: dict[str, type], layer_check: Any
) -> None:
    from tensorrt_llm._torch.models.modeling_qwen3vl import Qwen3VisionBlock

    def attach(model: Any, config: Any) -> None:  # a block built by the model itself, on another backend
        model.visual.blocks.append(Qwen3VisionBlock(dataclasses.replace(config, attn_backend="VANILLA"), 9))

    cls = _qwen_subclass(models, "Attached", attach)
    shim.install("enforce", layer_check=layer_check)
    with pytest.raises(shim.ShimError) as caught:
        cls(model_config("TRTLLM", {"vision": "TRTLLM"}, depth=2)).load_weights({})
    assert "layer visual.blocks.2.attn.attn was built with VanillaAttention" in str(caught.value)


def test_an_encoder_inside_a_child_the_recording_did_not_walk_still_gets_its_model_name(
    models: dict[str, type], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensorrt_llm._torch.attention_backend.vanilla import VanillaAttentionMetadata
    from tensorrt_llm._torch.models.modeling_qwen3vl import Qwen3VisionModel
    from torch import nn

    from declint.runtime_shim import checks

    class Holder(nn.Module):  # not an encoder; builds one inside (a second vision module)
        def __init__(self, vision_config: Any) -> None:
            super().__init__()
            self.inner = Qwen3VisionModel(vision_config)

    def add(model: Any, config: Any) -> None:
        model.holder = Holder(model.visual.model_config)

    cls = _qwen_subclass(models, "TowerInside", add)
    shim.install("enforce", layer_check="construction")
    monkeypatch.setattr(checks, "after_construction", lambda *args: pytest.fail("walked"))
    model = cls(model_config("TRTLLM", {"vision": "TRTLLM"}, depth=2))  # `holder` is not walked: valid
    monkeypatch.undo()
    inner = model.holder.inner  # type: ignore[attr-defined]
    inner.metadata_cls = VanillaAttentionMetadata  # a mismatch with its TRTLLM layers
    with pytest.raises(shim.ShimError) as caught:
        inner.setup_attn_metadata(4, 64)
    assert [(v.code, v.model) for v in caught.value.violations] == [("DL106", "TowerInside"), ("DL105", "TowerInside")]


def test_backends_created_by_another_thread_during_a_construction_are_not_recorded(
    models: dict[str, type], recorded: list[dict[object, list[object]]]
) -> None:
    from tensorrt_llm._torch.attention_backend.trtllm import TrtllmAttention

    inside, proceed = threading.Event(), threading.Event()
    elsewhere: list[object] = []

    def wait(model: Any, config: Any) -> None:
        inside.set()
        assert proceed.wait(10)

    def other() -> None:
        assert inside.wait(10)
        elsewhere.extend(TrtllmAttention(0, 2, 16) for _ in range(3))
        proceed.set()

    cls = _qwen_subclass(models, "Waiting", wait)
    shim.install("enforce", layer_check="construction")
    thread = threading.Thread(target=other)
    thread.start()
    model = cls(model_config("TRTLLM", {"vision": "TRTLLM"}, depth=2))
    thread.join(10)
    (groups,) = recorded
    assert len(elsewhere) == 3 and not any(b is e for layers in groups.values() for b in layers for e in elsewhere)
    assert groups[model.visual] == _walked(model.visual)  # type: ignore[attr-defined]


def test_the_backend_base_init_is_wrapped_only_while_installed(models: dict[str, type]) -> None:
    from tensorrt_llm._torch.attention_backend.interface import AttentionBackend

    original = vars(AttentionBackend)["__init__"]
    status = shim.install("enforce")  # layers checked at first use: nothing to record
    assert {t.key: (t.state, t.detail) for t in status.targets}["attention-backend-base"] == (
        "found",
        "not wrapped: layer_check is first-use (backends are found by a walk at each model's first use)",
    )
    assert vars(AttentionBackend)["__init__"] is original
    status = shim.install("enforce", layer_check="construction")  # switched on a second install
    assert {t.key: (t.state, t.detail) for t in status.targets}["attention-backend-base"] == ("patched", "")
    assert vars(AttentionBackend)["__init__"].__wrapped__ is original
    shim.uninstall()
    assert vars(AttentionBackend)["__init__"] is original
    shim.install("enforce", layer_check="construction")
    assert vars(AttentionBackend)["__init__"].__wrapped__ is original
    shim.uninstall()
    assert vars(AttentionBackend)["__init__"] is original


def test_a_declaration_changed_after_install_is_read_at_the_next_construction(models: dict[str, type]) -> None:
    from tensorrt_llm._torch.models import modeling_glm5_next

    shim.install("enforce")
    with pytest.raises(shim.ShimError) as before:
        _build(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
    original = modeling_glm5_next.Glm5NextVModel.encoder_attention_backends
    modeling_glm5_next.Glm5NextVModel.encoder_attention_backends = {"vision": ("TRTLLM", "VANILLA")}
    try:
        with pytest.raises(shim.ShimError) as after:
            _build_and_use(models, "Glm5NextVModel", {"vision": "VANILLA"}, {})
    finally:
        modeling_glm5_next.Glm5NextVModel.encoder_attention_backends = original
    assert (before.value.codes, after.value.codes) == (("DL104",), ("DL106",))


def test_an_unknown_backend_name_is_rejected_after_known_ones_were_looked_up(models: dict[str, type]) -> None:
    from tensorrt_llm._torch.attention_backend import utils

    shim.install("enforce")
    assert utils.get_attention_backend("trtllm").__name__ == "TrtllmAttention"
    assert utils.get_attention_backend("trtllm").__name__ == "TrtllmAttention"
    with pytest.raises(shim.ShimError, match="FLASHINFR"):
        utils.get_attention_backend("FLASHINFR")


def test_the_metadata_contract_looks_each_backend_class_up_once_and_skips_the_standard_library(
    models: dict[str, type], monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib
    import inspect
    import typing

    from declint.runtime_shim import contract

    with flashinfer_importable():
        flashinfer = importlib.import_module("tensorrt_llm._torch.attention_backend.flashinfer")
    backend = flashinfer.FlashInferAttention
    looked_up: list[type] = []
    real = inspect.getsourcelines

    def recording(obj: Any) -> Any:
        looked_up.append(obj)
        return real(obj)

    contract.reads.cache_clear()
    monkeypatch.setattr(inspect, "getsourcelines", recording)
    try:
        found = dict(contract.reads(backend))
    finally:
        contract.reads.cache_clear()
    # FlashInfer's forward reads metadata.kv_layout (what TRTLLM's metadata lacks): at its line in the file.
    lines = Path(flashinfer.__file__).read_text(encoding="utf-8").splitlines()
    assert found["kv_layout"] == next(n for n, line in enumerate(lines, 1) if "metadata.kv_layout" in line)
    assert typing.Generic not in looked_up and object not in looked_up
    assert len(looked_up) == len(set(looked_up))
    assert set(looked_up) == {k for k in backend.__mro__ if k.__module__ not in ("builtins", "typing", "abc")}


def test_a_record_file_that_cannot_be_written_never_breaks_construction(
    models: dict[str, type], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    name, overrides, extra, (code, _) = CASES["fixed-encoder"]
    shim.install("record", tmp_path)  # a directory: every append fails
    with caplog.at_level(logging.WARNING, logger="declint.runtime_shim"):
        for _ in range(2):
            with contextlib.suppress(ValueError):  # the demo's own late check, as in record mode above
                _build(models, name, overrides, extra)
    assert [v.code for v in shim.violations()] == [code, code]  # kept in memory all the same
    assert [r.getMessage() for r in caplog.records] == [
        f"declint runtime shim: cannot append to the record file {tmp_path}: Is a directory; "
        "violations are kept in memory (declint.runtime_shim.violations())"
    ]


def test_the_shim_keeps_its_defaults_to_the_encoders_listed_as_the_linter_does() -> None:
    """Red-team 51: `Conventions(encoders=("vision",))` still mapped audio to an audio encoder:
    a model registering audio got DL102 (declare audio) and, declaring it, DL104 (unknown
    encoder), where the linter (which keeps its defaults to `encoders`) says all clear."""
    from declint.runtime_shim.conventions import Conventions
    from declint.runtime_shim.declarations import model_facts

    class VLModel:
        encoder_attention_backends: ClassVar = {"vision": ("VANILLA", "TRTLLM", "FLASHINFER")}

    members = ("VANILLA", "TRTLLM", "FLASHINFER")
    facts = model_facts(VLModel, Conventions(encoders=("vision",)), members, (("image", "audio"), VLModel))
    assert (dict(facts.required), facts.violations) == ({"vision": "image"}, ())
    assert Conventions(encoders=("vision",)).encoder_from_name("WhisperEncoder") == "vision"
    assert Conventions().encoder_from_name("WhisperEncoder") == "audio"
