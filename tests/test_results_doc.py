"""docs/results.md is rendered from the records in docs/results/: the page cannot drift from the data."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "render_results.py"


@pytest.fixture(scope="module")
def renderer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("render_results", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_results_page_is_current() -> None:
    done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr or "docs/results.md differs: run python benchmarks/render_results.py"


def _record(
    capability: str, kind: str, title: str, rows: list[dict[str, object]], **table: object
) -> dict[str, object]:
    return {
        "capability": capability,
        "kind": kind,
        "title": title,
        "command": f"citegraph {capability}",
        "machine": "2 cores",
        "date": "2026-01-02",
        "commit": None,
        "tables": [{"title": None, "rows": rows, **table}],
    }


def _write(folder: Path, name: str, record: dict[str, object]) -> None:
    (folder / name).write_text(json.dumps(record), encoding="utf-8")


def test_render_two_tiny_records(tmp_path: Path, renderer: ModuleType) -> None:
    results = tmp_path / "results"
    (results / "history").mkdir(parents=True)
    quality = _record(
        "recommend",
        "quality",
        "Recall",
        [
            {"system": "bm25", "metric": "R@10", "value": 0.5},
            {"system": "ours", "metric": "R@10", "value": 0.75},
            {"system": "ours", "metric": "MRR", "value": 0.25},
        ],
        baselines=["bm25"],
        served="ours",
        decimals=3,
    )
    speed = _record("ingest", "speed", "Throughput", [{"system": "ingest", "metric": "rows/s", "value": 931123}])
    speed["commit"] = "abc1234"
    _write(results, "b.json", quality)
    _write(results, "a.json", speed)
    _write(results / "history", "old.json", {"not": "a record"})  # history/ is never read
    out = tmp_path / "results.md"

    assert renderer.main(["--results", str(results), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    # Capabilities in build order (ingest before recommend), whatever the file names.
    assert page.index("## Ingest") < page.index("## Citation recommendation")
    assert "| ingest | 931,123 |" in page and "commit `abc1234`" in page and "commit not recorded" in page
    assert "| bm25 *(baseline)* | 0.500 |  |" in page
    assert "| **ours** | 0.750 | 0.250 |" in page
    assert "```bash\ncitegraph recommend\n```" in page

    # Deterministic, and --check agrees with what was written; a changed figure makes it fail.
    assert renderer.main(["--results", str(results), "--out", str(out), "--check"]) == 0
    quality["tables"][0]["rows"][0]["value"] = 0.51  # type: ignore[index]
    _write(results, "b.json", quality)
    assert renderer.main(["--results", str(results), "--out", str(out), "--check"]) == 1


def test_record_without_commit_field_is_refused(tmp_path: Path, renderer: ModuleType) -> None:
    record = _record("text", "speed", "Encoder", [{"system": "encode", "metric": "texts/s", "value": 32.2}])
    del record["commit"]
    _write(tmp_path, "r.json", record)
    with pytest.raises(renderer.RecordError, match="missing commit"):
        renderer.load_records(tmp_path)
