"""`citegraph export neo4j-admin`: header format, row counts, and values read back as the importer reads them."""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from rich_graph import SIZES, fill, snapshot

from api.cli.main import main
from graph import GraphStore, StoreConfig, open_store
from graph.errors import DataError
from graph.neo4j_admin import export_neo4j_admin, format_value, node_header, rel_header
from graph.schema import Kind, Property


@pytest.fixture
def rich_store(tmp_path: Path) -> Iterator[GraphStore]:
    store = fill(open_store(StoreConfig(db_path=tmp_path / "rich.db", sizes=SIZES)))
    yield store
    store.close()


def read_csv(header: Path, data: Path) -> tuple[list[str], list[list[str]]]:
    with header.open(encoding="utf-8", newline="") as h, data.open(encoding="utf-8", newline="") as d:
        return next(csv.reader(h)), list(csv.reader(d))


def parse(field: str, kind: str) -> object:
    """A field as neo4j-admin reads it (an empty field: no property)."""
    if field == "":
        return None
    if kind.endswith("[]"):
        items = field.split(";")
        return [float(x) for x in items] if kind[:-2] in ("float", "double") else items
    return {"long": int, "double": float, "boolean": lambda v: v == "true"}.get(kind, str)(field)


def test_headers_use_the_import_format(rich_store: GraphStore, tmp_path: Path) -> None:
    export = export_neo4j_admin(rich_store, tmp_path / "out", progress=False)
    headers = {f.name: (tmp_path / "out" / f"{f.name}.header.csv").read_text().strip() for f in export.files}
    paper = headers["Paper"].split(",")
    assert paper[:2] == ["id:ID(Paper)", ":LABEL"]
    for field in [
        "title:string",
        "year:long",
        "stub:boolean",
        "n_cited:long",
        "embedding:float[]",
        "poincare:double[]",
    ]:
        assert field in paper
    for field in ["cocite_partners:string[]", "cocite_probs:double[]", "negative_weight:double", "cocite_cluster:long"]:
        assert field in paper
    assert (
        headers["ArxivCategory"]
        == "code:ID(ArxivCategory),:LABEL,name:string,description:string,fused:float[],poincare:double[]"
    )
    assert headers["CITES"] == (
        ":START_ID(Paper),:END_ID(Paper),:TYPE,n_contexts:long,dataset:string,intents:string[],influential:boolean"
    )
    assert headers["WROTE"] == ":START_ID(Author),:END_ID(Paper),:TYPE,position:long"
    assert (
        headers["LINKS_TO"] == ":START_ID(Sentence),:END_ID(Sentence),:TYPE,score:double,method:string,annotator:string"
    )
    assert headers["BROADER"] == ":START_ID(AcmClass),:END_ID(AcmClass),:TYPE"
    for node in rich_store.schema.nodes.values():
        assert headers[node.label] == ",".join(node_header(node))
    for rel in rich_store.schema.rels.values():
        assert headers[rel.type] == ",".join(rel_header(rel))


def test_one_file_pair_per_label_and_type_with_every_row(rich_store: GraphStore, tmp_path: Path) -> None:
    out = tmp_path / "out"
    export = export_neo4j_admin(rich_store, out, progress=False)
    stats = rich_store.stats()
    expected = {**stats["nodes"], **stats["relationships"]}
    assert {f.name: f.rows for f in export.files} == expected
    assert sorted(p.name for p in out.iterdir()) == sorted(
        [*(f"{name}.csv" for name in expected), *(f"{name}.header.csv" for name in expected), "import.sh"]
    )
    for f in export.files:
        fields, rows = read_csv(f.header, f.data)
        assert len(rows) == expected[f.name], f.name  # the abstract's line break stays inside one quoted field
        assert all(len(row) == len(fields) for row in rows), f.name
        column = ":LABEL" if f.kind == "nodes" else ":TYPE"
        assert {row[fields.index(column)] for row in rows} <= {f.name}


def test_values_read_back_as_stored(rich_store: GraphStore, tmp_path: Path) -> None:
    out = tmp_path / "out"
    export = export_neo4j_admin(rich_store, out, progress=False)
    stored = snapshot(rich_store)
    for f in export.files:
        fields, rows = read_csv(f.header, f.data)
        names = [re.sub(r":.*$", "", field) for field in fields]
        kinds = [field.partition(":")[2] for field in fields]
        parsed = []
        for row in rows:
            record = {}
            for name, kind, value in zip(names, kinds, row):
                if kind.startswith(("START_ID", "END_ID")):
                    record["source" if kind.startswith("START") else "target"] = value
                elif kind.startswith("ID("):
                    record[name] = value
                elif kind not in ("LABEL", "TYPE"):
                    record[name] = parse(value, kind)
            parsed.append(record)
        expected = stored[f.name]
        if f.kind == "relationships":
            parsed.sort(key=repr)
        assert len(parsed) == len(expected)
        for got, want in zip(parsed, expected):
            for name, value in want.items():
                if isinstance(value, list) and value and isinstance(value[0], float):
                    dtype = np.float32 if f.name in ("Paper", "Sentence") and name == "embedding" else np.float64
                    assert np.array_equal(np.asarray(got[name], dtype=dtype), np.asarray(value, dtype=dtype)), name
                elif value in ("", []):  # the csv module reads "" like an empty field; the raw text is checked below
                    assert got[name] in (None, "", []), name
                else:
                    assert got[name] == value, (f.name, name)
    papers = (out / "Paper.csv").read_text(encoding="utf-8")
    assert '"ACL, ""main"""' in papers and '"Comput. Linguist.\nvol 19"' in papers
    assert re.search(r'^"p5","Paper",[^\n]*,2005,"",', papers, re.M)  # an empty string stays a quoted empty string
    links = (out / "LINKS_TO.csv").read_text(encoding="utf-8").splitlines()
    assert '"p1#1","p2#3","LINKS_TO",0.62,"silver",""' in links  # LINKS_TO identity: "" (no annotator), not null


def test_import_script_holds_the_whole_command(rich_store: GraphStore, tmp_path: Path) -> None:
    export = export_neo4j_admin(rich_store, tmp_path / "out", database="citations", progress=False)
    script = (tmp_path / "out" / "import.sh").read_text()
    assert 'cd "$(dirname "$0")"' in script
    assert "neo4j-admin database import full \\\n  --nodes=Paper.header.csv,Paper.csv \\\n" in script
    assert "--relationships=LINKS_TO.header.csv,LINKS_TO.csv" in script
    assert script.rstrip().endswith(
        "--array-delimiter=';' \\\n  --multiline-fields=true \\\n  --id-type=string \\\n  citations"
    )
    assert f"--nodes={tmp_path / 'out' / 'Paper.header.csv'},{tmp_path / 'out' / 'Paper.csv'}" in export.command


def test_format_value_by_kind() -> None:
    assert format_value(None, Property("t", Kind.STRING)) == "" and format_value("", Property("t", Kind.STRING)) == '""'
    assert (
        format_value(2001.0, Property("y", Kind.INT)) == "2001"
        and format_value(float("nan"), Property("y", Kind.INT)) == ""
    )
    assert format_value(True, Property("b", Kind.BOOL)) == "true"
    assert format_value(np.array([0.1, 0.25], dtype=np.float32), Property("e", Kind.VECTOR32, 2)) == "0.1;0.25"
    assert format_value([], Property("l", Kind.STRING_LIST)) == ""
    with pytest.raises(DataError, match="contains the array delimiter"):
        format_value(["a;b"], Property("cocite_partners", Kind.STRING_LIST), owner="Paper")


def test_cli_export_neo4j_admin(
    rich_store: GraphStore, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, size in [("EMBEDDING", SIZES.embedding), ("TAXONOMY", SIZES.taxonomy), ("POINCARE", SIZES.poincare)]:
        monkeypatch.setenv(f"CITEGRAPH_{name}_DIM", str(size))
    rich_store.close()
    assert main(["-q", "--db", str(tmp_path / "rich.db"), "export", "neo4j-admin", str(tmp_path / "cli")]) == 0
    out = capsys.readouterr().out
    assert f"{tmp_path / 'cli' / 'Paper.csv'}\t5 rows" in out and "neo4j-admin database import full" in out
    assert len(pd.read_csv(tmp_path / "cli" / "CITES.csv", header=None)) == 6
