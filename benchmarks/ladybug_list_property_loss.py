"""Standalone reproduction of a LadybugDB 0.22 data loss: ``SET`` of a ``DOUBLE[]`` node property, then ``CHECKPOINT``.

Three rounds of ``LOAD FROM $f MATCH (n:P {id: id}) SET n.probs = probs`` on a 14-node table (10 nodes,
then 5, then 1), each followed by ``CHECKPOINT``, leave elements of some nodes' lists as ``0.0`` (whole
lists or single elements; the lengths stay right). Hit are nodes written in the second round and nodes
written only in the first (``p12``, ``p13``: not written for two rounds). Another connection and a
fresh open of the file read the same zeros: the checkpoint wrote them to the data file. Each of the
three checkpoints is needed (dropping any one, or all with ``--no-checkpoint``, keeps every value), and
so are the values: the same statements with every list a constant, or with uniformly random doubles,
keep them all; the lists below (co-citation noise distributions that ``citegraph compute cocitation``
wrote on a test graph: repeated values and short decimals such as 0.2, 0.125, 0.25 next to long ones)
lose some. After the first round ``CALL storage_info('P')`` shows the list's data column
``probs_data`` as ``FLOAT_COMPRESSION[55], 6 Exceptions`` (ALP with exceptions); opening the database with
``compression=False`` (``--no-compression``) keeps every value, but a store whose first round was written
compressed still loses them in later rounds opened without compression.
No relationship table, DROP, RENAME, deletion or NULL is needed. In citegraph the checkpoints were
the ones the engine runs after an autocommit ``COPY`` (the staging table of a relationship swap),
which is why the loss showed after a ``CO_CITED`` rewrite and looked tied to it.

Found by recording every statement of a failing test (``tests/gnn/cocitation/test_cocitation_delta.py``
with the co-citation update's noise rewrite removed), replaying them against the engine alone and
removing statements and rows while the loss stayed. Output with ladybug 0.22.0 (Python 3.11, Linux
x86-64)::

    $ python benchmarks/ladybug_list_property_loss.py
    ladybug 0.22.0, checkpoint after each round: True
    wrong after the rounds: {'p00': [0.0, 0.0, 0.0], 'p05': [0.0, 0.1760007852857057, 0.1760007852857057],
        'p09': [0.0, 0.0, 0.0], 'p12': [0.16227904950251928, 0.16227904950251928, 0.0], 'p13': [0.0, 0.0, 0.0]}
    a second connection reads: (the same)
    after a reopen: (the same)
    $ python benchmarks/ladybug_list_property_loss.py --no-checkpoint
    ladybug 0.22.0, checkpoint after each round: False
    wrong after the rounds: none
    a second connection reads: none
    after a reopen: none
    $ python benchmarks/ladybug_list_property_loss.py --no-compression
    ladybug 0.22.0, checkpoint after each round: True, compression: False
    wrong after the rounds: none
    ...

citegraph opens the engine with compression off (``graph.embedded.COMPRESSION``;
``benchmarks/store_compression.py`` measures the cost), and ``tests/graph/test_list_property_checkpoint.py``
runs this case through the store, with a relationship swap or a close as the checkpoints.
"""

from __future__ import annotations

import argparse
import os
import tempfile

import ladybug
import pyarrow as pa

ROUNDS: list[list[tuple[str, list[float]]]] = [
    [
        ("p01", [0.20903837305847037, 0.20903837305847037, 0.20903837305847037]),
        ("p04", [0.2, 0.2, 0.2]),
        ("p06", [0.18029663372751453, 0.13302068315271437, 0.13302068315271437]),
        ("p07", [0.2516978411585548, 0.14966043176828905, 0.14966043176828905]),
        ("p08", [0.125, 0.125, 0.125]),
        ("p09", [0.22883630477021175, 0.16883266737348385, 0.1003885046427174]),
        ("p10", [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]),
        ("p11", [0.2516978411585548, 0.14966043176828905, 0.14966043176828905]),
        ("p12", [0.16227904950251928, 0.16227904950251928, 0.09649170014213736]),
        ("p13", [0.17370675658418164, 0.10328665542697729, 0.10328665542697729]),
    ],
    [
        ("p00", [0.2189323335860304, 0.13017794440232827, 0.13017794440232827]),
        ("p02", [0.2516978411585548, 0.14966043176828905, 0.14966043176828905]),
        ("p03", [0.25, 0.25, 0.25]),
        ("p05", [0.29599685885717725, 0.1760007852857057, 0.1760007852857057]),
        ("p09", [0.20108514441918876, 0.20108514441918876, 0.1195659422323245]),
    ],
    [("p03", [0.25, 0.25, 0.25])],
]
IDS = [f"p{k:02d}" for k in range(14)]


def read(conn: ladybug.Connection) -> dict[str, list[float] | None]:
    """Every node's list."""
    result = conn.execute("MATCH (n:P) RETURN n.id, n.probs")
    assert not isinstance(result, list)  # one statement, one result
    rows: dict[str, list[float] | None] = {}
    while result.has_next():
        key, value = result.get_next()
        rows[str(key)] = value  # type: ignore[assignment]  # a DOUBLE[] column: a list or None
    return rows


def wrong(rows: dict[str, list[float] | None], want: dict[str, list[float]]) -> dict[str, list[float] | None]:
    """The nodes whose list is not the one last written."""
    return {key: rows.get(key) for key, value in sorted(want.items()) if rows.get(key) != value}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--no-checkpoint", action="store_true", help="no CHECKPOINT after the rounds")
    parser.add_argument("--no-compression", action="store_true", help="open the database with compression=False")
    args = parser.parse_args()
    path = os.path.join(tempfile.mkdtemp(), "db")
    db = ladybug.Database(path, compression=not args.no_compression)
    conn = ladybug.Connection(db)
    conn.execute("CREATE NODE TABLE P(id STRING, probs DOUBLE[], PRIMARY KEY(id))")
    conn.execute("COPY P(id) FROM $f", {"f": pa.table({"id": IDS})})
    want: dict[str, list[float]] = {}
    for rows in ROUNDS:
        frame = pa.table({"id": [k for k, _ in rows], "probs": pa.array([v for _, v in rows], pa.list_(pa.float64()))})
        conn.execute("LOAD FROM $f MATCH (n:P {id: id}) SET n.probs = probs", {"f": frame})
        want.update(rows)
        if not args.no_checkpoint:
            conn.execute("CHECKPOINT")
    print(
        f"ladybug {ladybug.__version__}, checkpoint after each round: {not args.no_checkpoint}"
        + (", compression: False" if args.no_compression else "")
    )
    print("wrong after the rounds:", wrong(read(conn), want) or "none")
    print("a second connection reads:", wrong(read(ladybug.Connection(db)), want) or "none")
    conn.close()
    db.close()
    db = ladybug.Database(path, compression=not args.no_compression)
    print("after a reopen:", wrong(read(ladybug.Connection(db)), want) or "none")


if __name__ == "__main__":
    main()
