"""torch's device errors in the project's terms: CUDA out of memory and unusable CUDA become ConfigError."""

from __future__ import annotations

from unittest.mock import MagicMock

import pytest
import torch

import gnn.device
from gnn.device import is_device_error, on_device, reuse_large_cpu_buffers, select_device, translate_torch_error
from graph.errors import ConfigError


def test_out_of_memory_says_what_to_do() -> None:
    exc = torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB\nmore detail")
    error = translate_torch_error(exc, torch.device("cuda:0"))
    assert isinstance(error, ConfigError)
    assert str(error).startswith("the GPU (cuda:0) ran out of memory: CUDA out of memory. Tried to allocate 2.00 GiB;")
    assert "--device cpu" in str(error) and "more detail" not in str(error)
    cublas = RuntimeError("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")
    assert "ran out of memory" in str(translate_torch_error(cublas))


def test_unusable_cuda_says_what_to_do() -> None:
    for exc in (AssertionError("Torch not compiled with CUDA enabled"), RuntimeError("No CUDA GPUs are available")):
        assert is_device_error(exc)
        error = translate_torch_error(exc, "cuda")
        assert isinstance(error, ConfigError) and str(error).startswith("CUDA is not usable (cuda): ")
        assert "--device cpu" in str(error)


def test_on_device_translates_device_errors_and_passes_bugs_through() -> None:
    with pytest.raises(ConfigError, match="ran out of memory") as caught, on_device("cuda"):
        raise torch.OutOfMemoryError("CUDA out of memory.")
    assert isinstance(caught.value.__cause__, torch.OutOfMemoryError)
    with pytest.raises(RuntimeError, match="size mismatch"), on_device("cpu"):
        raise RuntimeError("size mismatch, m1: [2 x 3], m2: [4 x 5]")
    with pytest.raises(AssertionError), on_device():
        raise AssertionError("an invariant of the step")
    with on_device("cpu"):
        assert torch.ones(2).sum().item() == 2.0


def test_select_device_refuses_what_torch_cannot_use() -> None:
    assert select_device("cpu") == torch.device("cpu")
    with pytest.raises(ConfigError, match="is not a torch device"):
        select_device("tpu:zero")


def test_large_buffer_reuse_raises_glibcs_mmap_threshold_for_the_block_only(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = MagicMock()
    libc.mallopt.return_value = 1
    monkeypatch.setattr(gnn.device, "_glibc", lambda: libc)
    with pytest.raises(ValueError), reuse_large_cpu_buffers(torch.device("cpu")):
        assert libc.mallopt.call_args_list[-1].args == (-3, 1 << 30)
        raise ValueError("the block failed")
    assert libc.mallopt.call_args_list[-1].args == (-3, 128 * 1024)  # put back even when the block raised
    libc.malloc_trim.assert_called_once_with(0)
    libc.reset_mock()
    with reuse_large_cpu_buffers(torch.device("meta")):  # not the CPU: torch's own allocator, nothing to tune
        pass
    libc.mallopt.assert_not_called()


def test_large_buffer_reuse_keeps_results() -> None:
    """On this machine's C library: the block computes what it computes without it."""
    x = torch.rand(2000, 2000, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    with reuse_large_cpu_buffers(torch.device("cpu")):
        inside = [(x * k).sum() for k in range(3)]
    assert [float(v) for v in inside] == [float((x * k).sum()) for k in range(3)]
