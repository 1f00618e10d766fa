"""Which torch device a compute step runs on."""

from __future__ import annotations

import torch

from graph.errors import ConfigError


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


__all__ = ["select_device"]
