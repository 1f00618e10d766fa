"""Cheap steps in place of the build's heavy ones (tests/api/test_build.py): the runner's bookkeeping is what is
tested. A module of their own, importing no model: a step run beside another is sent to a second process, which
imports the module of the step's function, and this one loads in a moment."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from api.pipeline.registry import Action, StepContext
from graph.errors import DataError


@dataclass(frozen=True)
class Count:
    """Counts the papers."""

    def command(self) -> tuple[str, ...]:
        return ("cypher", "MATCH (p:Paper) RETURN count(p) AS n")


def count_papers(context: StepContext, settings: Count) -> None:
    with context.open(read_only=True) as store:
        print(f"{store.count_nodes('Paper')} papers")


@dataclass(frozen=True)
class NeedsFile:
    """A step that fails until its file exists."""

    path: str

    def command(self) -> tuple[str, ...]:
        return ("cypher", "--file", self.path)


def needs_file(context: StepContext, settings: NeedsFile) -> None:
    if not Path(settings.path).is_file():
        raise DataError(f"{settings.path} is missing; write it and run the build again")
    print(f"read {settings.path}")


COUNT = Action("count papers", count_papers)
NEEDS_FILE = Action("needs a file", needs_file)


__all__ = ["COUNT", "NEEDS_FILE", "Count", "NeedsFile"]
