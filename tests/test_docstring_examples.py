"""The examples in docstrings (``>>>``) are run, so what the documentation shows is what the code does."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("gnn", "api", "graph", "loaders")


def modules_with_examples() -> list[str]:
    names = []
    for package in PACKAGES:
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            path = ROOT / Path(*info.name.split("."))
            source = path / "__init__.py" if info.ispkg else path.with_suffix(".py")
            if source.is_file() and ">>> " in source.read_text(encoding="utf-8"):
                names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", modules_with_examples())
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} docstring examples failed (output above)"
