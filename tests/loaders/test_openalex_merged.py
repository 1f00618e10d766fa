"""OpenAlex's merged_ids: merged works become aliases of their survivors, deleted works go, on the real sample
(loaders.openalex_merged, graph.works.apply_work_changes, `citegraph ingest openalex`)."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from api.cli.main import main
from graph import StoreConfig, open_store
from graph.aliases import stored_keys
from graph.errors import ConfigError
from loaders.openalex_merged import find_beside, read_merged_ids

MERGED = (
    "merge_date,id,merge_into_id\n"
    "2024-01-02,W1497199863,W1799889357\n"  # two works bibliometrix cites: one merged into the other
    "2024-01-03,https://openalex.org/W2741809807,\n"  # The state of OA (doi:10.7717/peerj.4375): deleted
    "2024-01-01,W9999999999,W1\n"  # not in the store
)


def _write_gz(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as out:
        out.write(text)
    return path


def test_merges_are_read_in_date_order_and_bad_lines_rejected(tmp_path: Path) -> None:
    path = _write_gz(tmp_path / "merged_ids" / "works" / "2024.csv.gz", MERGED + "2024-01-04,A123,W1\n")
    merged = read_merged_ids(path.parent)
    assert merged.merges == [
        ("openalex:W9999999999", "openalex:W1"),
        ("openalex:W1497199863", "openalex:W1799889357"),
        ("openalex:W2741809807", None),
    ]
    assert [(r.origin, "not an OpenAlex work id" in r.reason) for r in merged.rejects] == [("2024.csv.gz:5", True)]
    partition = tmp_path / "works" / "updated_date=2024-01-01"
    partition.mkdir(parents=True)
    assert find_beside(partition / "part_000.gz") == find_beside(partition) == path.parent
    elsewhere = tmp_path / "a" / "b" / "c" / "d" / "works"
    elsewhere.mkdir(parents=True)
    assert find_beside(elsewhere) is None
    bad = tmp_path / "other.csv"
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not an OpenAlex merged_ids file"):
        read_merged_ids(bad)


@pytest.mark.shared_data
def test_ingest_openalex_applies_the_snapshots_merged_ids(
    tmp_path: Path, data_dir: Path, store_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    works = tmp_path / "data" / "works"
    works.mkdir(parents=True)
    shutil.copy(data_dir / "formats" / "openalex" / "results_page_1.json", works / "page.json")
    _write_gz(tmp_path / "data" / "merged_ids" / "works" / "2024-01-01.csv.gz", MERGED)
    outputs, graphs = [], []
    for _ in range(2):  # the second run reads the works again: the same graph
        assert main(["--db", str(store_path), "ingest", "openalex", str(works), "--json"]) == 0
        outputs.append(json.loads(capsys.readouterr().out)[0]["merged_ids"])
        with open_store(StoreConfig(db_path=store_path, read_only=True)) as store:
            graphs.append(store.stats())
    assert outputs[0] == {"merged": 1, "deleted": 1, "already": 0, "absent": 1}
    # the merged work, cited again by id, joins its survivor; the deleted work, read again, is deleted again
    assert outputs[1] == {"merged": 0, "deleted": 1, "already": 1, "absent": 1}
    assert graphs[0] == graphs[1]
    store = open_store(StoreConfig(db_path=store_path, read_only=True))
    try:
        keys = stored_keys(store, ["openalex:W1497199863", "doi:10.7717/peerj.4375", "openalex:W2741809807"])
        assert keys == {"openalex:W1497199863": "openalex:W1799889357"}
        cites = store.read_edges("CITES")
        citing = cites[cites["target"] == "openalex:W1799889357"]["source"].tolist()
        assert citing == ["doi:10.1016/j.joi.2017.08.007"]  # one CITES where there were two
        # what only the deleted work cited went with it: every stub left is cited by bibliometrix
        assert set(cites["source"]) == {"doi:10.1016/j.joi.2017.08.007"}
        assert store.count_nodes("Paper") == 1 + cites["target"].nunique()
    finally:
        store.close()
