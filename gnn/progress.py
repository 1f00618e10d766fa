"""Timing the stages of a compute step as its progress bar advances."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm import tqdm


class StageTimer:
    """Times named stages of one step and advances its progress bar (one unit a stage) after each.

    ``seconds`` maps each stage run so far to its wall time; a step's report keeps it.
    """

    def __init__(self, bar: tqdm) -> None:
        self.bar = bar
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        self.bar.set_postfix_str(name)
        started = time.perf_counter()
        yield
        self.seconds[name] = time.perf_counter() - started
        self.bar.update()


__all__ = ["StageTimer"]
