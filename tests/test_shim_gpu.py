"""The runtime shim on CUDA: rejections allocate nothing, the metadata mismatch stops before any
kernel, an ignored override stops load_weights before it copies anything, the SDPA probe finds the
direct call and never runs inside a graph capture.

Marked `gpu`: skipped without CUDA (CI has none). Run on a GPU machine with
`pytest -m gpu tests/test_shim_gpu.py`; timings live in benchmarks/gpu_shim.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

from declint import runtime_shim as shim  # noqa: E402
from tests.shim_fixtures.demo_models import (  # noqa: E402
    flashinfer_importable,
    import_models,
    model_config,
    vanilla_declared_for_glm5,
)


@pytest.fixture
def classes() -> Iterator[dict[str, type]]:
    yield import_models()
    shim.uninstall()


def test_unsupported_override_is_rejected_before_any_allocation(classes: dict[str, type]) -> None:
    shim.install("enforce")
    config = model_config("TRTLLM", {"vision": "TRTLLM", "audio": "VANILLA"}, hidden=256, heads=4, depth=4)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    with pytest.raises(shim.ShimError) as caught, torch.device("cuda"):
        classes["Gemma4Model"](config)
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == before
    assert caught.value.codes == ("DL104",)


def test_metadata_mismatch_is_caught_before_the_first_kernel(classes: dict[str, type]) -> None:
    from torch.profiler import ProfilerActivity, profile

    with flashinfer_importable():
        from tests.shim_fixtures.skew_models import SkewVLModel

        shim.install("enforce")
        with torch.device("cuda"):
            model = SkewVLModel(model_config("TRTLLM", {"vision": "FLASHINFER"}, hidden=256, heads=4, depth=2))
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        with profile(activities=[ProfilerActivity.CUDA]) as prof, pytest.raises(shim.ShimError) as caught:
            model.visual.setup_attn_metadata(max_num_requests=4, max_num_tokens=256)
        torch.cuda.synchronize()
    assert caught.value.codes == ("DL106", "DL105")
    assert [e.name for e in prof.events() if e.device_type.name == "CUDA"] == []
    assert torch.cuda.memory_allocated() == before
    assert model.visual.attn_metadata is None


def test_an_ignored_override_stops_load_weights_before_any_copy(classes: dict[str, type]) -> None:
    from torch.profiler import ProfilerActivity, profile

    shim.install("enforce")  # layer_check="first-use": checked at the first use, here load_weights
    with vanilla_declared_for_glm5():
        with torch.device("cuda"):
            model = classes["Glm5NextVModel"](model_config("TRTLLM", {"vision": "VANILLA"}, hidden=256, heads=4))
            checkpoint = {name: torch.full_like(p, 7.0) for name, p in model.named_parameters()}
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        with profile(activities=[ProfilerActivity.CUDA]) as prof, pytest.raises(shim.ShimError) as caught:
            model.load_weights(checkpoint)
        torch.cuda.synchronize()
    assert [(v.code, v.check) for v in caught.value.violations] == [("DL106", "override-ignored")]
    assert [e.name for e in prof.events() if e.device_type.name == "CUDA"] == []
    assert torch.cuda.memory_allocated() == before
    assert not any(bool((p == 7).all()) for p in model.parameters())


def test_sdpa_probe_finds_the_direct_call_and_skips_graph_capture(classes: dict[str, type]) -> None:
    config = model_config("TRTLLM", None, hidden=256, heads=4, depth=2)
    with torch.device("cuda"):
        warm = classes["Step3p7VLModel"](config).eval()
    pixels = torch.randn(1, 3, 32, 32, device="cuda")
    with torch.inference_mode():
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            warm.vision_model(pixels)  # libraries initialised outside the capture
        torch.cuda.current_stream().wait_stream(stream)
        shim.install("record", probe_sdpa=True)
        with torch.device("cuda"):
            model = classes["Step3p7VLModel"](config).eval()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            model.vision_model(pixels)
        assert shim.violations() == ()  # the captured forward was not probed
        model.vision_model(pixels)
    found = shim.violations()
    assert [(v.code, v.location.rsplit("/", 1)[-1]) for v in found] == [("DL101", "modeling_step3vl.py:59")]
    assert not model.vision_model._forward_pre_hooks and not model.vision_model._forward_hooks
