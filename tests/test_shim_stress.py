"""The runtime shim under stress: concurrent install/uninstall, a target whose signature changed
(version guard), and target modules imported before install()."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

torch = pytest.importorskip("torch")

from declint import runtime_shim as shim  # noqa: E402
from tests.shim_fixtures.demo_models import import_models, model_config  # noqa: E402


@pytest.fixture
def models() -> Iterator[dict[str, type]]:
    classes = import_models()
    yield classes
    shim.uninstall()


def test_install_and_uninstall_from_many_threads_leaves_one_consistent_state(models: dict[str, type]) -> None:
    from tensorrt_llm._torch.attention_backend import utils
    from tensorrt_llm._torch.models import modeling_qwen3vl

    original_init = vars(modeling_qwen3vl.Qwen3VLModel)["__init__"]
    original_lookup = utils.get_attention_backend
    errors: list[BaseException] = []
    start = threading.Barrier(16)

    def churn(index: int) -> None:
        try:
            start.wait()
            for round_ in range(50):
                if (index + round_) % 2:
                    shim.install("warn")
                else:
                    shim.uninstall()
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=churn, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert not any(thread.is_alive() for thread in threads)
    # Whatever the interleaving, one final install wraps once and one uninstall restores.
    shim.install("enforce")
    wrapped = vars(modeling_qwen3vl.Qwen3VLModel)["__init__"]
    assert wrapped.__wrapped__ is original_init
    shim.uninstall()
    assert vars(modeling_qwen3vl.Qwen3VLModel)["__init__"] is original_init
    assert utils.get_attention_backend is original_lookup


def test_target_with_a_changed_signature_is_left_unpatched_with_one_warning(
    models: dict[str, type], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tensorrt_llm._torch.attention_backend import utils

    def get_attention_backend(*, name: str) -> type:  # a future release renamed the parameter
        raise NotImplementedError

    monkeypatch.setattr(utils, "get_attention_backend", get_attention_backend)
    with pytest.warns(shim.ShimTargetWarning, match="get-attention-backend") as warned:
        status = shim.install("enforce")
    assert len([w for w in warned if "get-attention-backend" in str(w.message)]) == 1
    state = {t.key: t for t in status.targets}["get-attention-backend"]
    assert state.state != "patched"
    assert utils.get_attention_backend is get_attention_backend  # left exactly as it was
    with pytest.raises(shim.ShimTargetError, match="get-attention-backend"):
        shim.uninstall()
        shim.install("enforce", strict=True)


def test_modules_imported_before_install_are_patched_at_install(models: dict[str, type]) -> None:
    from tensorrt_llm._torch.models import modeling_glm5_next

    assert "tensorrt_llm._torch.models.modeling_glm5_next" in sys.modules  # imported first
    shim.install("enforce")
    with pytest.raises(shim.ShimError) as caught:
        modeling_glm5_next.Glm5NextVModel(model_config("TRTLLM", {"vision": "VANILLA"}))
    assert caught.value.codes == ("DL104",)
