"""The runtime shim on a GPU: what it rejects before allocating, and what it costs.

    python benchmarks/gpu_shim.py [--out results.json] [--quick] [--only SECTION] [--rounds N]
    python benchmarks/gpu_shim.py --device meta --only construction   # the construction cost without a GPU
    python benchmarks/gpu_shim.py ... --shim-root DIR   # another revision's shim: DIR/declint/runtime_shim
    python benchmarks/gpu_shim.py ... --layer-check construction   # install(layer_check=...) in section 3

Runs on the demo stand-in (examples/mini_trtllm) with CUDA. Measures, each with and without
the shim installed (same process, A/B interleaved, medians):
  1. an unsupported override is rejected with torch.cuda.memory_allocated() unchanged;
  2. the metadata/backend mismatch is rejected inside setup_attn_metadata, before any kernel;
  3. model construction time, for two sizes of the Qwen3-VL stand-in (CONSTRUCTION_MODELS: the
     tests' 2-layer text model, and Qwen3-VL-2B's sizes; host clock around construction +
     synchronize; 200 and 100 ABBA rounds,
     both arms after install(), the collector off while timing; the paired per-round difference
     with a bootstrap 95% interval) and the time spent inside the shim's own construction hooks (begin +
     finish, median of 300 models with one install, and of 100 each right after an install), and
     the model's first use right after it (`load_weights({})`: where layer_check="first-use"
     checks the layers; paired with and without the shim like the construction);
  4. steady-state encoder forward and CUDA-graph replay (CUDA events; one untimed forward after
     each install/uninstall), and the first forward after a fresh install (metadata checked once);
  5. the SDPA probe: finds the direct call in Step3.7 VL's encoder on the first forward, then
     detaches; its cost while active.
`--device cpu|meta` runs section 3 only, on the host (the hooks are pure Python, so their cost
does not depend on the device; `meta` skips parameter init, `cpu` runs it).
Prints a table; writes every number to --out (JSON).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
# --shim-root DIR: measure the shim in DIR/declint/runtime_shim (another revision's, laid out as
# installed: DIR/declint/__init__.py and DIR/declint/runtime_shim/) instead of this checkout's.
_SHIM_ROOT = next((sys.argv[i + 1] for i, arg in enumerate(sys.argv[:-1]) if arg == "--shim-root"), None)
if _SHIM_ROOT:
    sys.path.insert(0, _SHIM_ROOT)

import torch  # noqa: E402

from declint import runtime_shim as shim  # noqa: E402
from tests.shim_fixtures.demo_models import flashinfer_importable, import_models, model_config  # noqa: E402

CUDA = torch.device("cuda")
DEVICE = CUDA  # --device; every section but construction needs CUDA
CUDA_SECTIONS = ("rejection", "metadata_mismatch", "steady_state", "sdpa_probe")
LAYER_CHECK: str | None = None  # --layer-check; None: install()'s default (and older shims' only way)


def install_for_construction() -> None:
    shim.install("enforce", **({"layer_check": LAYER_CHECK} if LAYER_CHECK else {}))  # type: ignore[arg-type]


def sync() -> None:
    if DEVICE.type == "cuda":
        torch.cuda.synchronize()


def rejected_without_allocation(classes: dict[str, type]) -> dict[str, Any]:
    cases = {
        "Gemma4Model audio=VANILLA (fixed encoder)": (classes["Gemma4Model"], {"vision": "TRTLLM", "audio": "VANILLA"}),
        "Glm5NextVModel vision=VANILLA (declares TRTLLM)": (classes["Glm5NextVModel"], {"vision": "VANILLA"}),
        "Gemma4UnifiedModel vision=TRTLLM (encoder-free)": (classes["Gemma4UnifiedModel"], {"vision": "TRTLLM"}),
    }
    results: dict[str, Any] = {}
    for label, (cls, overrides) in cases.items():
        config = model_config("TRTLLM", overrides, hidden=256, heads=4, depth=4)
        row: dict[str, Any] = {}
        for installed in (False, True):
            if installed:
                shim.install("enforce")
            sync()
            before = torch.cuda.memory_allocated()
            outcome = "built"
            try:
                with CUDA:
                    model = cls(config)
                del model
            except shim.ShimError as error:
                outcome = "ShimError " + ",".join(error.codes)
            except ValueError as error:
                outcome = f"ValueError from the model: {error}"
            sync()
            after = torch.cuda.memory_allocated()
            shim.uninstall()
            torch.cuda.empty_cache()
            row["with_shim" if installed else "without_shim"] = {
                "outcome": outcome,
                "memory_allocated_delta_bytes": after - before if outcome != "built" else "model built",
            }
        results[label] = row
    return results


def metadata_mismatch() -> dict[str, Any]:
    from torch.profiler import ProfilerActivity, profile

    with flashinfer_importable():
        from tests.shim_fixtures.skew_models import SkewVLModel, tokens

        config = model_config("TRTLLM", {"vision": "FLASHINFER"}, hidden=256, heads=4, depth=4)
        result: dict[str, Any] = {}
        with CUDA:
            model = SkewVLModel(config)
        inputs = tokens(model, 64)
        sync()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            model.visual.setup_attn_metadata(max_num_requests=4, max_num_tokens=1024)
            try:
                model.visual(inputs)
                result["without_shim"] = "no error"
            except AttributeError as error:
                result["without_shim"] = f"AttributeError at the first forward: {error}"
            sync()
        result["without_shim_kernels_before_failure"] = sum(1 for e in prof.events() if e.device_type.name == "CUDA")

        shim.install("enforce")
        with CUDA:
            model = SkewVLModel(config)
        sync()
        before = torch.cuda.memory_allocated()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            try:
                model.visual.setup_attn_metadata(max_num_requests=4, max_num_tokens=1024)
                result["with_shim"] = "no error"
            except shim.ShimError as error:
                result["with_shim"] = "ShimError " + ",".join(error.codes)
                result["with_shim_message"] = str(error)
            sync()
        result["with_shim_kernels_launched"] = sum(1 for e in prof.events() if e.device_type.name == "CUDA")
        result["with_shim_memory_delta_bytes"] = torch.cuda.memory_allocated() - before
        result["metadata_created"] = model.visual.attn_metadata is not None
        shim.uninstall()
    return result


# The model whose construction is timed: the Qwen3-VL stand-in with Qwen3-VL-2B's vision tower
# (1024 wide, 24 blocks) and either a 2-layer text model as wide as the tower (the tests' shape,
# the smallest build, so the shim's fixed per-model cost weighs most) or Qwen3-VL-2B's text model
# (2048 wide, 16 heads, 28 layers, 6144 MLP, 151,936-token vocabulary).
CONSTRUCTION_MODELS: dict[str, tuple[str, dict[str, int]]] = {
    "construction": (
        "Qwen3VLModel vision 1024x24 + text 1024x2",
        {"hidden": 1024, "heads": 16, "depth": 24, "text_layers": 2},
    ),
    "construction_2b": (
        "Qwen3VLModel with Qwen3-VL-2B's sizes: vision 1024x24 (MLP 4096) + text 2048x28 (MLP 6144, vocab 151936)",
        {
            "hidden": 1024,
            "heads": 16,
            "depth": 24,
            "intermediate": 4096,
            "text_layers": 28,
            "text_hidden": 2048,
            "text_intermediate": 6144,
            "vocab": 151936,
        },
    ),
}


def construction_overhead(classes: dict[str, type], which: str, rounds: int, hook_rounds: int) -> dict[str, Any]:
    cls = classes["Qwen3VLModel"]
    title, sizes = CONSTRUCTION_MODELS[which]
    config = model_config("TRTLLM", {"vision": "TRTLLM"}, **sizes)
    times: dict[str, list[float]] = {"without": [], "with": []}
    first_use: dict[str, list[float]] = {"without": [], "with": []}

    def build(installed: bool) -> tuple[float, float]:
        # Both arms take the same steps before the timed construction: install() (scanning
        # sys.modules, patching: it evicts caches) and, without the shim, uninstall(). So each
        # "with" model is the first one built after install(), as in a process that builds one
        # model. As timeit does, the collector is off while timing: a collection of the whole heap
        # landing in one build or the other is ~10 ms of noise, far more than what is measured.
        # The allocator keeps the previous model's blocks (no empty_cache): cudaMalloc latency
        # is the other large noise, and both arms reuse the same blocks.
        install_for_construction()
        if not installed:
            shim.uninstall()
        gc.collect()
        gc.disable()
        try:
            sync()
            start = time.perf_counter()
            with DEVICE:
                model = cls(config)
            sync()
            built = time.perf_counter()
            model.load_weights({})  # the first use: the layers are checked here with layer_check="first-use"
            used = time.perf_counter()
        finally:
            gc.enable()
        shim.uninstall()
        del model
        return built - start, used - built

    for installed in (False, True, False, True):  # warm-up: allocator, kernels, both code paths
        build(installed)
    for round_ in range(rounds):
        for label in ("without", "with") if round_ % 2 == 0 else ("with", "without"):  # ABBA: drift cancels
            elapsed, using = build(label == "with")
            times[label].append(elapsed)
            first_use[label].append(using)
    if DEVICE.type == "cuda":
        torch.cuda.empty_cache()
    a, b = statistics.median(times["without"]), statistics.median(times["with"])
    paired = [w - o for w, o in zip(times["with"], times["without"], strict=True)]
    paired_use = [w - o for w, o in zip(first_use["with"], first_use["without"], strict=True)]
    return {
        "layer_check": shim_layer_check(),
        "model": title,
        "device": str(DEVICE),
        "rounds": rounds,
        "median_s_without": a,
        "median_s_with": b,
        "overhead_percent": 100 * (b - a) / a,
        "overhead_s_paired_median": statistics.median(paired),
        "overhead_s_paired_ci95": bootstrap_median_ci(paired),
        "overhead_percent_paired": 100 * statistics.median(paired) / a,
        "shim_hooks_s": shim_hooks_cost(cls, config, hook_rounds, reinstall=False),
        "shim_hooks_s_first_after_install": shim_hooks_cost(cls, config, hook_rounds // 3, reinstall=True),
        "shim_hooks_rounds": hook_rounds,
        "first_use_s_without": statistics.median(first_use["without"]),
        "first_use_overhead_s_paired_median": statistics.median(paired_use),
        "first_use_overhead_s_paired_ci95": bootstrap_median_ci(paired_use),
        "all_s": times,
        "all_first_use_s": first_use,
    }


def shim_layer_check() -> str:
    install_for_construction()
    try:
        return str(getattr(shim.status(), "layer_check", None) or "construction (a shim without the option)")
    finally:
        shim.uninstall()


def bootstrap_median_ci(samples: list[float], draws: int = 2000) -> list[float]:
    """95% interval of the median of `samples` (percentile bootstrap, fixed seed)."""
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(samples, k=len(samples))) for _ in range(draws))
    return [medians[int(0.025 * draws)], medians[int(0.975 * draws) - 1]]


def shim_hooks_cost(cls: type, config: Any, rounds: int, *, reinstall: bool) -> float:
    """Median time spent inside the shim's own construction hooks (before + after __init__).

    One install for all models (`reinstall=False`: the per-model cost once the model class was
    built before), or a fresh install before each (the first model of a process). The backends
    are recorded inside __init__, between the hooks: the construction overhead above includes that.
    """
    from declint.runtime_shim import _shim

    spent: list[float] = []
    original_begin, original_finish = _shim.Shim.begin, _shim.Shim.finish

    def begin(self: Any, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return original_begin(self, *args)
        finally:
            spent.append(time.perf_counter() - start)

    def finish(self: Any, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return original_finish(self, *args)
        finally:
            spent[-1] += time.perf_counter() - start

    _shim.Shim.begin, _shim.Shim.finish = begin, finish  # type: ignore[method-assign]
    try:
        install_for_construction()
        for _ in range(rounds):
            if reinstall:
                shim.uninstall()
                install_for_construction()
            with DEVICE:
                model = cls(config)
            del model
    finally:
        shim.uninstall()
        _shim.Shim.begin, _shim.Shim.finish = original_begin, original_finish  # type: ignore[method-assign]
    return statistics.median(spent)


def cuda_timed(fn: Callable[[], Any], iters: int) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iters


def steady_state(classes: dict[str, type], rounds: int, iters: int) -> dict[str, Any]:
    torch.set_default_dtype(torch.bfloat16)
    try:
        config = model_config("TRTLLM", {"vision": "TRTLLM"}, hidden=1024, heads=16, depth=24)
        shim.install("enforce", probe_sdpa=True)
        with CUDA:
            model = classes["Qwen3VLModel"](config).eval()
        visual = model.visual
        visual.setup_attn_metadata(max_num_requests=8, max_num_tokens=8192)
        grid = torch.tensor([[1, 32, 32]] * 4, device=CUDA)
        patches = torch.randn(4 * 1024, 3 * 2 * 8 * 8, device=CUDA)
        with torch.inference_mode():
            visual(patches, grid)  # first forward: the probe runs once here and detaches
            sync()
            eager: dict[str, list[float]] = {"without": [], "with": []}
            for round_ in range(rounds):
                for label in ("without", "with") if round_ % 2 == 0 else ("with", "without"):
                    if label == "with":
                        shim.install("enforce")
                    else:
                        shim.uninstall()
                    # One forward first, untimed: the first forward after a fresh install binds the
                    # encoder's metadata, which the shim checks once (the one-time cost measured by
                    # `first_forward_after_install`); steady state is what follows.
                    visual(patches, grid)
                    eager[label].append(cuda_timed(lambda: visual(patches, grid), iters))
            first = first_forward_after_install(lambda: visual(patches, grid))
            shim.uninstall()
            # Graph: the block stack over prepared metadata (prepare copies from the host).
            metadata = visual.prepare_attn_metadata([1024] * 4)
            x = visual.patch_embed(patches)

            def blocks() -> torch.Tensor:
                y = x
                for block in visual.blocks:
                    y = block(y, metadata)
                return y

            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    blocks()
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                out = blocks()
            replay: dict[str, list[float]] = {"without": [], "with": []}
            for round_ in range(rounds):
                for label in ("without", "with") if round_ % 2 == 0 else ("with", "without"):
                    if label == "with":
                        shim.install("enforce")
                    else:
                        shim.uninstall()
                    replay[label].append(cuda_timed(graph.replay, iters))
            shim.uninstall()
            check = (out - blocks()).abs().max().item()
    finally:
        torch.set_default_dtype(torch.float32)

    def summary(samples: dict[str, list[float]]) -> dict[str, Any]:
        a, b = statistics.median(samples["without"]), statistics.median(samples["with"])
        spread = max(samples["without"]) - min(samples["without"])
        return {
            "median_ms_without": a,
            "median_ms_with": b,
            "delta_percent": 100 * (b - a) / a,
            "spread_percent_without": 100 * spread / a,
            "all_ms": samples,
        }

    return {
        "encoder": "Qwen3 vision 1024x24 bf16, 4 images x 1024 tokens, TRTLLM stand-in",
        "rounds": rounds,
        "iters_per_round": iters,
        "eager_forward": summary(eager),
        "first_forward_after_install_ms": first,
        "graph_replay": summary(replay),
        "graph_vs_eager_max_abs_diff": check,
    }


def first_forward_after_install(forward: Callable[[], Any], rounds: int = 5) -> dict[str, float]:
    """Median ms of the first forward after a fresh install, and of the forward after it."""
    first: list[float] = []
    second: list[float] = []
    for _ in range(rounds):
        shim.uninstall()
        shim.install("enforce")
        first.append(cuda_timed(forward, 1))
        second.append(cuda_timed(forward, 1))
    shim.uninstall()
    return {"first_ms": statistics.median(first), "second_ms": statistics.median(second)}


def sdpa_probe(classes: dict[str, type], rounds: int, iters: int) -> dict[str, Any]:
    from declint.runtime_shim import probe

    shim.install("record", probe_sdpa=True)
    config = model_config("TRTLLM", None, hidden=1024, heads=16, depth=8)
    with CUDA:
        model = classes["Step3p7VLModel"](config).eval()
    encoder = model.vision_model
    pixels = torch.randn(2, 3, 32, 32, device=CUDA)
    with torch.inference_mode():
        encoder(pixels)
        sync()
        found = [v.render() for v in shim.violations() if v.code == "DL101"]
        hooks_left = len(encoder._forward_pre_hooks) + len(encoder._forward_hooks)
        encoder(pixels)
        sync()
        after_second = sum(1 for v in shim.violations() if v.code == "DL101")
        shim.uninstall()
        mode = probe.make_mode(())
        samples: dict[str, list[float]] = {"plain": [], "probe": []}
        for _ in range(3):  # warm-up of both paths
            encoder(pixels)
            with mode:
                encoder(pixels)
        for round_ in range(rounds):
            for label in ("plain", "probe") if round_ % 2 == 0 else ("probe", "plain"):
                if label == "probe":
                    with mode:
                        samples[label].append(cuda_timed(lambda: encoder(pixels), iters))
                else:
                    samples[label].append(cuda_timed(lambda: encoder(pixels), iters))
        plain, probed = statistics.median(samples["plain"]), statistics.median(samples["probe"])
    return {
        "dl101_on_first_forward": found,
        "hooks_left_after_first_forward": hooks_left,
        "dl101_total_after_second_forward": after_second,
        "forward_ms_plain": plain,
        "forward_ms_probe_active": probed,
        "probe_cost_percent": 100 * (probed - plain) / plain,
    }


def main() -> None:
    global DEVICE, LAYER_CHECK
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="gpu_shim_results.json")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", action="append", help="run only these sections (repeatable)")
    parser.add_argument("--device", choices=("cuda", "cpu", "meta"), default="cuda")
    parser.add_argument("--rounds", type=int, help="ABBA rounds of the construction section (default 200)")
    parser.add_argument(
        "--steady", type=int, nargs=2, metavar=("ROUNDS", "ITERS"), help="steady-state rounds (15), iterations (50)"
    )
    parser.add_argument("--shim-root", help="measure the shim under DIR/declint/runtime_shim (read at import)")
    parser.add_argument(
        "--layer-check", choices=("first-use", "construction"), help="install(layer_check=...) in section 3"
    )
    args = parser.parse_args()
    DEVICE = torch.device(args.device)
    LAYER_CHECK = args.layer_check
    rounds, iters = args.steady or ((3, 5) if args.quick else (15, 50))
    construction_rounds = args.rounds or (5 if args.quick else 200)
    hook_rounds = 20 if args.quick else 300
    if DEVICE.type != "cuda":
        wanted = set(args.only or ["construction", "construction_2b"])
        if wanted & set(CUDA_SECTIONS):
            parser.error(f"{', '.join(sorted(wanted & set(CUDA_SECTIONS)))} need --device cuda")
        args.only = sorted(wanted)
    classes = import_models()
    results: dict[str, Any] = {"device": _device_name(), "torch": torch.__version__, "shim": shim.__file__}
    sections: dict[str, Callable[[], Any]] = {
        "rejection": lambda: rejected_without_allocation(classes),
        "metadata_mismatch": metadata_mismatch,
        "construction": lambda: construction_overhead(classes, "construction", construction_rounds, hook_rounds),
        "construction_2b": lambda: construction_overhead(
            classes, "construction_2b", max(construction_rounds // 2, 1), hook_rounds // 3
        ),
        "steady_state": lambda: steady_state(classes, rounds, iters),
        "sdpa_probe": lambda: sdpa_probe(classes, rounds, iters),
    }
    for name, run in sections.items():
        if args.only and name not in args.only:
            continue
        try:
            results[name] = run()
        except Exception as error:  # keep the other sections' numbers
            import traceback

            results[name] = {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc()}
        finally:
            shim.uninstall()
        Path(args.out).write_text(json.dumps(results, indent=2, default=str))
        print(f"== {name}", json.dumps(_brief(results[name]), default=str), flush=True)


def _device_name() -> str:
    if DEVICE.type == "cuda":
        return torch.cuda.get_device_name()
    host = platform.processor() or platform.machine()
    return f"{DEVICE.type} ({host}, {os.cpu_count()} cores, Python {platform.python_version()})"


def _brief(value: Any) -> Any:
    """The result without the raw samples, for the printed summary."""
    if isinstance(value, dict):
        return {k: _brief(v) for k, v in value.items() if k not in ("all_s", "all_first_use_s", "all_ms", "traceback")}
    return value


if __name__ == "__main__":
    main()
