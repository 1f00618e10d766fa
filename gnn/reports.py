"""Writing a harness's report: the JSON record and its Markdown table beside it.

``citegraph eval recommend``, ``citegraph train reranker`` (and its ``--ablation``) each return a
report as a plain dict; :func:`write_report` writes it as ``<out>.json`` and renders it with the
harness's own ``markdown`` function into ``<out>.md`` beside it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graph.files import write_atomic


def write_report(report: dict[str, Any], out: Path, markdown: Callable[[dict[str, Any]], str]) -> tuple[Path, Path]:
    """``report`` as JSON at ``out`` (``.json`` whatever its suffix) and ``markdown(report)`` beside it as
    ``.md``; returns both paths. Values JSON cannot hold (paths, numpy scalars) are written as text."""
    out.parent.mkdir(parents=True, exist_ok=True)
    json_path = out if out.suffix == ".json" else out.with_suffix(".json")
    write_atomic(json_path, json.dumps(report, indent=2, default=str))
    md_path = json_path.with_suffix(".md")
    write_atomic(md_path, markdown(report) + "\n")
    return json_path, md_path


__all__ = ["write_report"]
