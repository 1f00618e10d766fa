"""A read-only query reads: the allowlist of :mod:`graph.readonly`, and the embedded store behind it."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

import cypher
from graph import GraphStore, StoreConfig, open_store
from graph.embedded import plain_numbers
from graph.errors import QueryError, StoreError
from graph.readonly import EMBEDDED_PROCEDURES, NEO4J_PROCEDURES, check_plan, check_read_only

READS = [
    "MATCH (p:Paper) RETURN p.id ORDER BY p.id",
    "match (p:Paper) where p.year > $y return p.id skip 1 limit 2;",
    "OPTIONAL MATCH (p:Paper)-[:CITES]->(q) RETURN p.id, count(q) AS n",
    "UNWIND [1, 2] AS x WITH x WHERE x > 1 RETURN x",
    "RETURN 1 AS x UNION ALL RETURN 2 AS x",
    "RETURN 'COPY (MATCH (p) RETURN p) TO ''x.csv''' AS s",
    'RETURN "a\\"; CHECKPOINT; //" AS s',
    "RETURN 'it\\'s; DROP TABLE Paper' AS s // COPY in a comment",
    "/* EXPORT DATABASE 'dump' */ MATCH (p:Paper) RETURN p.id",
    "MATCH (copy:Paper) RETURN copy.id AS set",
    "MATCH (p:Paper) RETURN {set: p.id, create: 1} AS m, p.year AS start",
    "MATCH (`set`:Paper) RETURN `set`.id",
    "CALL show_tables() RETURN *",
    "CALL table_info('Paper') RETURN *",
    "RETURN 1 AS x; // the end",
    "MATCH (p:Paper) RETURN p.id AS load, count(*) AS call",
    "UNWIND [1] AS as WITH as AS as RETURN as",
    "RETURN CASE WHEN true THEN 1 END AS set, null AS copy",
]

REFUSED = {
    "COPY (MATCH (p:Paper) RETURN p.id LIMIT 5) TO 'x.csv'": "COPY",
    "EXPORT DATABASE 'dump'": "EXPORT",
    "IMPORT DATABASE 'dump'": "IMPORT",
    "LOAD FROM '/etc/passwd' (header = false, delim = ':') RETURN *": "LOAD",
    "MATCH (p:Paper) WITH p LOAD FROM 'x.csv' RETURN *": "LOAD",
    "INSTALL httpfs": "INSTALL",
    "LOAD httpfs": "LOAD",
    "LOAD EXTENSION httpfs": "LOAD",
    "CHECKPOINT": "CHECKPOINT",
    "checkpoint;": "CHECKPOINT",
    "// a comment first\nCHECKPOINT": "CHECKPOINT",
    "/* */ COPY Paper TO 'p.csv'": "COPY",
    "ATTACH 'other.db' AS other (dbtype lbug)": "ATTACH",
    "DETACH other": "DETACH",
    "USE other": "USE",
    "CREATE (p:Paper {id: 'x'})": "CREATE",
    "MATCH (p:Paper) MERGE (q:Paper {id: p.id})": "MERGE",
    "MATCH (p:Paper) SET p.title = 'x'": "SET",
    "MATCH (p:Paper) DETACH DELETE p": "DETACH",
    "MATCH (p:Paper) DELETE p": "DELETE",
    "MATCH (p:Paper) REMOVE p.title": "REMOVE",
    "DROP TABLE Paper": "DROP",
    "ALTER TABLE Paper ADD x INT64": "ALTER",
    "BEGIN TRANSACTION": "BEGIN",
    "COMMIT": "COMMIT",
    "RETURN 1; COPY Paper TO 'p.csv'": "more than one statement",
    "RETURN 1 ;; ": "more than one statement",
    "CALL project_graph('g', ['Paper'], ['CITES']) RETURN *": "CALL project_graph",
    "CALL threads = 1": "CALL threads",
    "CALL apoc.load.json('file:///etc/passwd')": "CALL apoc.load.json",
    "RETURN apoc.cypher.runFirstColumnSingle('CREATE (n) RETURN n', {}) AS x": "apoc.cypher.runFirstColumnSingle",
    "SHOW DATABASES": "SHOW",
    # a variable named `as` hid the next word; a number swallowed the keyword glued to it
    "UNWIND [1] AS as WITH as LOAD FROM '/etc/passwd' (header=false, file_format='csv', delim=':') RETURN *": "LOAD",
    "UNWIND [1] AS as WITH as CALL clear_warnings() RETURN *": "CALL clear_warnings",
    "UNWIND [1] AS x WITH x SKIP 0LOAD FROM '/etc/passwd' RETURN *": "LOAD",
    "UNWIND [1] AS x WITH x WHERE x = 1.0LOAD FROM '/etc/passwd' RETURN *": "LOAD",
    "RETURN 1 AS x // a\rLOAD CSV FROM 'file:///etc/passwd' AS l RETURN l": "line break other than a newline",
    "RETURN 'never closed": "never closes",
    "RETURN 1 /* never closed": "never closes",
    "": "empty",
    "  // only a comment": "empty",
}


@pytest.mark.parametrize("text", READS)
def test_reading_statements_pass(text: str) -> None:
    check_read_only(text, procedures=EMBEDDED_PROCEDURES)


@pytest.mark.parametrize(("text", "named"), REFUSED.items())
def test_everything_else_is_refused_naming_what(text: str, named: str) -> None:
    with pytest.raises(QueryError) as caught:
        check_read_only(text, procedures=EMBEDDED_PROCEDURES)
    assert named in str(caught.value)


def test_a_plan_that_writes_or_calls_a_table_function_is_refused() -> None:
    read = "│ RESULT_COLLECTOR[2] │\n│ PROJECTION[1] │\n│ TABLE_FUNCTION_CALL[0] │\n│ Function: READ_FTABLE │"
    check_plan(read)
    with pytest.raises(QueryError, match="COPY_TO"):
        check_plan(read + "\n│ COPY_TO[3] │")
    with pytest.raises(QueryError, match="CLEAR_WARNINGS"):
        check_plan(read.replace("READ_FTABLE", "CLEAR_WARNINGS"))
    with pytest.raises(QueryError, match="does not name"):
        check_plan(read.replace("│ Function: READ_FTABLE │", ""))
    with pytest.raises(QueryError, match="names no operator"):
        check_plan("")


def test_neo4j_describes_with_its_own_procedures() -> None:
    check_read_only("CALL db.labels() YIELD label RETURN label", procedures=NEO4J_PROCEDURES)
    check_read_only("RETURN duration.between(date('2020-01-01'), date()) AS d", procedures=NEO4J_PROCEDURES)
    with pytest.raises(QueryError, match="CALL show_tables"):
        check_read_only("CALL show_tables() RETURN *", procedures=NEO4J_PROCEDURES)


def test_an_unknown_first_word_is_left_to_the_parser() -> None:
    def parse(text: str) -> None:
        raise StoreError(f"Parser exception: {text.split()[0]}")

    with pytest.raises(StoreError, match="MATC"):
        check_read_only("MATC (n) RETURN n", procedures=EMBEDDED_PROCEDURES, parse=parse)
    with pytest.raises(QueryError, match="`FROBNICATE`, which is not a reading clause"):
        check_read_only("FROBNICATE", procedures=EMBEDDED_PROCEDURES, parse=lambda text: None)


@pytest.mark.parametrize("name", cypher.names("explore"))
def test_every_explore_query_passes(name: str) -> None:
    check_read_only(cypher.load(name).text, procedures=EMBEDDED_PROCEDURES)


# the embedded store ------------------------------------------------------------------------------


@pytest.fixture
def reader(store: GraphStore, store_path: Path) -> Iterator[GraphStore]:
    store.close()
    with open_store(StoreConfig(db_path=store_path, read_only=True)) as opened:
        yield opened


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize(
    "text",
    [
        "COPY (MATCH (p:Paper) RETURN p.id LIMIT 5) TO 'x.csv'",
        "EXPORT DATABASE 'dump'",
        "LOAD FROM 'secret.csv' (header = false, delim = ':') RETURN *",
        "INSTALL httpfs",
        "RETURN 1; COPY (MATCH (p:Paper) RETURN p.id) TO 'y.csv'",
    ],
)
def test_the_store_refuses_statements_that_reach_files_and_writes_none(
    reader: GraphStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "secret.csv").write_text("root:x:0:0\n", encoding="utf-8")
    before = _files(tmp_path)
    with pytest.raises(QueryError, match="read-only"):
        reader.read_only_query(text)
    assert _files(tmp_path) == before


def test_checkpoint_is_refused_and_later_read_only_opens_work(reader: GraphStore, store_path: Path) -> None:
    with pytest.raises(QueryError, match="CHECKPOINT"):
        reader.read_only_query("CHECKPOINT")
    reader.close()
    for _ in range(2):
        with open_store(StoreConfig(db_path=store_path, read_only=True)) as again:
            assert again.count_nodes("Paper") == 5
            assert again.read_only_query("MATCH (p:Paper) RETURN count(p) AS n") == (["n"], [[5]])


def test_reads_and_describing_calls_still_run(reader: GraphStore) -> None:
    assert reader.read_only_query("RETURN 'COPY' AS s") == (["s"], [["COPY"]])
    columns, rows = reader.read_only_query("CALL show_tables() RETURN name ORDER BY name")
    assert columns == ["name"] and ["Paper"] in rows


def test_sums_of_integers_come_back_as_integers(reader: GraphStore) -> None:
    # LadybugDB sums INT64 into INT128 (Arrow decimal128(38, 0), Python Decimal); Neo4j gives integers
    columns, rows = reader.read_only_query(
        "MATCH (p:Paper) RETURN sum(CASE WHEN p.year > 3000 THEN 1 ELSE 0 END) AS later, sum(p.year) AS years, "
        "[sum(p.year)] AS listed, avg(p.year) AS mean"
    )
    assert columns == ["later", "years", "listed", "mean"]
    assert rows == [[0, 10002, [10002], pytest.approx(2000.4)]]  # years 2001 + 1993 + 1999 + 2004 + 2005
    assert [type(v) for v in rows[0][:2]] == [int, int] and type(rows[0][2][0]) is int


def test_plain_numbers_turns_decimals_into_ints_or_floats() -> None:
    wide = pa.decimal128(38, 0)
    table = pa.table(
        {
            "n": pa.array([Decimal(0), Decimal(-7)], wide),
            "big": pa.array([Decimal(2**70), Decimal(1)], wide),
            "scaled": pa.array([Decimal("1.50"), None], pa.decimal128(10, 2)),
            "listed": pa.array([[Decimal(3)], None], pa.list_(wide)),
            "vector": pa.array([[1.0, 2.0], [3.0, 4.0]], pa.list_(pa.float32(), 2)),
        }
    )
    rows = plain_numbers(table.select(["n", "scaled", "listed", "vector"])).to_pylist()
    assert rows == [
        {"n": 0, "scaled": 1.5, "listed": [3], "vector": [1.0, 2.0]},
        {"n": -7, "scaled": None, "listed": None, "vector": [3.0, 4.0]},
    ]
    assert type(rows[0]["n"]) is int and type(rows[0]["listed"][0]) is int
    # past the int64 range (an overflow error on Neo4j): a float rather than a failure
    assert plain_numbers(table.select(["big"])).column("big").to_pylist() == [float(2**70), 1.0]
    untouched = table.select(["vector"])
    assert plain_numbers(untouched) is untouched
