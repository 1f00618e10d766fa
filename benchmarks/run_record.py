"""What a benchmark writes beside its figures so that a reader can run it again."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
from datetime import date
from pathlib import Path
from typing import Any

import torch


def run_record(script: str, args: argparse.Namespace) -> dict[str, Any]:
    """``command`` (the script with every option, given or defaulted, spelled out), ``date`` and ``machine``."""
    options = " ".join(
        f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
        for k, v in vars(args).items()
        if v is not None and v != []  # an option left at an empty list cannot be spelled out: argparse wants a value
    )
    return {
        "command": f"python {script} {options}",
        "date": date.today().isoformat(),
        "machine": f"{platform.machine()}, {torch.get_num_threads()} torch thread(s)",
    }


def commit(*, short: bool = False) -> str | None:
    """The commit the benchmark runs at: ``CITEGRAPH_COMMIT`` where set (a copied working tree, e.g. on a
    lent GPU machine, may carry another repository's git), else the checkout's ``HEAD`` (abbreviated with
    ``short``); None without git."""
    if os.environ.get("CITEGRAPH_COMMIT"):
        return os.environ["CITEGRAPH_COMMIT"]
    command = ["git", "rev-parse", *(["--short"] if short else []), "HEAD"]
    try:
        done = subprocess.run(command, cwd=Path(__file__).resolve().parents[1], capture_output=True, text=True)
    except OSError:
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def load_module(path: Path, name: str) -> object:
    """A Python file imported as a module of its own (an earlier version of a project module)."""
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def write_json(out: str | Path, report: dict[str, Any]) -> Path:
    """Write ``report`` to ``out`` (folders made as needed)."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2), encoding="utf-8")
    return path
