"""Which torch device a compute step runs on, and torch's device errors in the project's terms.

torch reports a GPU that ran out of memory as ``torch.OutOfMemoryError`` and a missing or broken
CUDA setup as a ``RuntimeError`` (or, on a CPU-only build, an ``AssertionError``) whose message says
so. :func:`translate_torch_error` turns those into a :class:`~graph.errors.ConfigError` that says
what to do (another device, a smaller batch); :func:`on_device` applies it to a block of work, so
a step wraps the code that runs on the device once instead of catching torch errors here and there.
Every other torch error (a shape mismatch, a NaN check) is a bug and passes through unchanged.
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from graph.errors import CitegraphError, ConfigError

# Substrings of torch's messages when CUDA is absent or unusable (no driver, no device, a CPU build).
_NO_CUDA = (
    "no cuda gpus are available",
    "found no nvidia driver",
    "no cuda-capable device",
    "torch not compiled with cuda enabled",
    "cuda driver version is insufficient",
)
# Substrings of torch's messages when the GPU's memory is spent outside the caching allocator (cuBLAS, cuDNN).
_OUT_OF_MEMORY = ("out of memory", "cublas_status_alloc_failed")


def select_device(name: str | None = None) -> torch.device:
    """``name`` as a :class:`torch.device`; ``None`` picks CUDA when present, else the CPU.

    Asking for CUDA on a machine without it is a :class:`~graph.errors.ConfigError` rather than a
    silent fallback, so a run that was meant for the GPU never quietly takes hours on the CPU.
    """
    if name is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError as exc:
        raise ConfigError(f"device {name!r} is not a torch device; use 'cpu', 'cuda' or 'cuda:N'") from exc
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ConfigError(
            f"device {name!r} asked for, but this machine has no CUDA device; use 'cpu' or leave it unset"
        )
    return device


def is_device_error(exc: BaseException) -> bool:
    """Whether ``exc`` is torch saying the GPU ran out of memory or CUDA is unusable (not a bug in the step)."""
    if isinstance(exc, torch.OutOfMemoryError):
        return True
    if not isinstance(exc, (RuntimeError, AssertionError)):
        return False
    message = str(exc).lower()
    return any(marker in message for marker in (*_NO_CUDA, *_OUT_OF_MEMORY))


def translate_torch_error(exc: BaseException, device: torch.device | str | None = None) -> CitegraphError:
    """The project's error for a device error of torch (see :func:`is_device_error`), saying what to do."""
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    where = f" ({device})" if device is not None else ""
    message = str(exc).lower()
    if isinstance(exc, torch.OutOfMemoryError) or any(marker in message for marker in _OUT_OF_MEMORY):
        return ConfigError(
            f"the GPU{where} ran out of memory: {reason}; free the GPU (another process may hold it), "
            "run on the CPU with --device cpu, or use a smaller batch"
        )
    return ConfigError(f"CUDA is not usable{where}: {reason}; run on the CPU with --device cpu (or leave it unset)")


@contextmanager
def on_device(device: torch.device | str | None = None) -> Iterator[None]:
    """Run the block, translating torch's device errors (:func:`translate_torch_error`); others pass through."""
    try:
        yield
    except (RuntimeError, AssertionError) as exc:
        if not is_device_error(exc):
            raise
        raise translate_torch_error(exc, device) from exc


# glibc's mallopt parameter for the size from which an allocation is its own mmap (mallopt(3)).
_M_MMAP_THRESHOLD = -3
_DEFAULT_MMAP_THRESHOLD = 128 * 1024  # glibc's initial value


@contextmanager
def reuse_large_cpu_buffers(device: torch.device) -> Iterator[None]:
    """Inside the block, large CPU tensors reuse freed memory instead of fresh pages from the kernel.

    glibc serves every allocation above its mmap threshold (at most 32 MiB) with a new mapping and
    unmaps it when freed, so a loop that allocates the same [n, n] float64 matrices every step (the
    exact-softmax class layout: about twenty of 60 MB per epoch at n = 2,747) spends most of its time
    in page faults on zeroed pages: measured on the project's 2-core CPU, 0.95 s an epoch against
    0.45 s with the threshold raised to 1 GiB, which keeps those matrices in the heap for reuse.
    The threshold is put back after the block and the heap's free memory returned to the kernel
    (``malloc_trim``). Nothing changes on a GPU (torch's caching allocator), or where the C library
    has no ``mallopt`` (not glibc).
    """
    libc = _glibc() if device.type == "cpu" else None
    if libc is None or libc.mallopt(_M_MMAP_THRESHOLD, 1 << 30) != 1:
        yield
        return
    try:
        yield
    finally:
        libc.mallopt(_M_MMAP_THRESHOLD, _DEFAULT_MMAP_THRESHOLD)
        libc.malloc_trim(0)


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return None
    return libc if hasattr(libc, "mallopt") and hasattr(libc, "malloc_trim") else None


__all__ = ["is_device_error", "on_device", "reuse_large_cpu_buffers", "select_device", "translate_torch_error"]
