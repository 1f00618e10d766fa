"""``citegraph check``: read every node and relationship of a store and report each impossible value.

What is impossible is :mod:`graph.integrity`'s table: non-finite floats, computed values outside the
range their step guarantees, vectors of the wrong length, co-citation pairs stored the wrong way
round, and labels whose keys do not add up to their count. Each finding names the property, how
many values, a few keys, and the command that writes the property when a step computes it; the
report ends with what to do about a damaged store. An engine failure while reading a table (a page
it cannot decode) is a finding too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from graph.errors import CitegraphError
from graph.integrity import LENGTHS, RANGES, STEPS, VECTOR_KINDS, damage_advice
from graph.schema import Kind, NodeType, RelType
from graph.statements import identifier
from graph.store import GraphStore

BATCH_KEYS = 10_000  # nodes (or start nodes of relationships) read per statement


@dataclass(frozen=True)
class Finding:
    """Values of one property (or one structural rule) that a sound store cannot hold."""

    where: str  # "CO_CITED.jaccard", "Paper keys"
    problem: str  # "not finite", "outside [0, 1]"
    count: int
    examples: tuple[str, ...]  # a few keys (or "source -> target")
    step: str | None  # the command that writes the property, when a step computes it

    def line(self) -> str:
        fix = f" (written by `citegraph {self.step}`)" if self.step else ""
        return f"{self.where}: {self.count} {self.problem}, e.g. {', '.join(self.examples)}{fix}"


@dataclass
class CheckReport:
    """What :func:`check_store` read and found."""

    store: str
    nodes: dict[str, int] = field(default_factory=dict)
    relationships: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    @property
    def sound(self) -> bool:
        return not self.findings

    def summary(self) -> str:
        read = f"{sum(self.nodes.values()):,} nodes and {sum(self.relationships.values()):,} relationships"
        if self.sound:
            return f"{self.store}: no impossible value in {read} (every computed property in its range)"
        lines = [f"{self.store}: {len(self.findings)} kind(s) of impossible value in {read}:"]
        lines += [f"  {finding.line()}" for finding in self.findings]
        lines.append(damage_advice(self.store))
        return "\n".join(lines)


def check_store(
    store: GraphStore, *, batch: int = BATCH_KEYS, progress: Callable[[str], None] | None = None
) -> CheckReport:
    """Read every node and relationship of ``store`` and report each value no step writes (module docstring)."""
    report = CheckReport(store.describe())
    for label, node in store.schema.nodes.items():
        if progress:
            progress(label)
        _check_label(store, node, batch, report)
    for rel_type, rel in store.schema.rels.items():
        if progress:
            progress(rel_type)
        _check_rel(store, rel, batch, report)
    return report


def _scan(
    store: GraphStore, what: str, report: CheckReport, read: Callable[[], Iterable[pa.Table]]
) -> Iterator[pa.Table]:
    """The tables ``read`` yields; an engine failure while reading becomes a finding (a page it cannot decode)."""
    try:
        yield from read()
    except CitegraphError as exc:
        report.findings.append(Finding(what, f"unreadable ({str(exc)[:200]})", 1, ("-",), None))


def _check_label(store: GraphStore, node: NodeType, batch: int, report: CheckReport) -> None:
    label = node.label
    counted = store.count_nodes(label)
    keys: list[str | None] = []  # every key is a string (schema.py)

    def read() -> Iterator[pa.Table]:
        keys.extend(
            row["key"]
            for row in store.query_arrow(
                "every_key", identifiers={"LABEL": label, "KEY": node.key}, verify=False
            ).to_pylist()
        )
        columns = [p for p in node.properties if p.name != node.key and _checked(label, p.name, p.kind)]
        identifiers = {
            "LABEL": identifier(label),
            "KEY": identifier(node.key),
            "NODE_COLUMNS": "".join(f", n.{identifier(p.name)} AS {p.name}" for p in columns),
        }
        ordered = sorted(k for k in keys if k is not None)
        for start in range(0, len(ordered), batch):
            yield store.query_arrow(
                "nodes_by_keys", {"keys": ordered[start : start + batch]}, identifiers, verify=False
            )

    for table in _scan(store, label, report, read):
        _check_table(label, node, table, table.column("key").to_pylist(), report)
    report.nodes[label] = len(keys)
    distinct = len({k for k in keys if k is not None})
    if len(keys) != counted or distinct != len(keys):
        report.findings.append(
            Finding(
                f"{label} keys", f"keys read for {counted} counted nodes ({distinct} distinct)", len(keys), ("-",), None
            )
        )


def _check_rel(store: GraphStore, rel: RelType, batch: int, report: CheckReport) -> None:
    source, target = store.schema.node(rel.source), store.schema.node(rel.target)
    total = 0

    def read() -> Iterator[pa.Table]:
        keys = sorted(
            row["key"]
            for row in store.query_arrow(
                "every_key", identifiers={"LABEL": rel.source, "KEY": source.key}, verify=False
            ).to_pylist()
            if row["key"] is not None
        )
        identifiers = {
            "SOURCE": identifier(rel.source),
            "SOURCE_KEY": identifier(source.key),
            "TYPE": identifier(rel.type),
            "TARGET": identifier(rel.target),
            "TARGET_KEY": identifier(target.key),
            "COLUMNS": "".join(
                f", r.{identifier(p.name)} AS {p.name}" for p in rel.properties if _checked(rel.type, p.name, p.kind)
            ),
        }
        for start in range(0, len(keys), batch):
            yield store.query_arrow("rels_from_keys", {"keys": keys[start : start + batch]}, identifiers, verify=False)

    for table in _scan(store, rel.type, report, read):
        total += table.num_rows
        names = [f"{s} -> {t}" for s, t in zip(table.column("source").to_pylist(), table.column("target").to_pylist())]
        _check_table(rel.type, rel, table, names, report)
        if rel.type == "CO_CITED" and table.num_rows:
            _cocited_rules(table, names, report)
    report.relationships[rel.type] = total
    counted = store.count_rels(rel.type)
    if counted != total:
        report.findings.append(Finding(f"{rel.type} edges", f"read for {counted} counted", total, ("-",), None))


def _checked(owner: str, name: str, kind: Kind) -> bool:
    return (
        kind in (Kind.FLOAT, Kind.FLOAT_LIST, *VECTOR_KINDS)
        or (owner, name) in RANGES
        or (owner == "Paper" and name == "cocite_partners")
    )


def _check_table(
    owner: str, schema: NodeType | RelType, table: pa.Table, names: list[str], report: CheckReport
) -> None:
    for prop in schema.properties:
        if prop.name not in table.column_names:
            continue
        column = table.column(prop.name)
        where = f"{owner}.{prop.name}"
        step = STEPS.get(owner) or STEPS.get(prop.name)
        values = column.to_pylist()
        if prop.kind in (Kind.FLOAT, Kind.FLOAT_LIST, *VECTOR_KINDS):
            bad = [
                i
                for i, v in enumerate(values)
                if v is not None and not np.isfinite(np.asarray(v, dtype=np.float64)).all()
            ]
            _add(report, where, "values not finite (NaN or infinity)", bad, names, step)
        if (owner, prop.name) in RANGES:
            low, high = RANGES[(owner, prop.name)]
            bad = [i for i, v in enumerate(values) if v is not None and not _within(v, low, high)]
            _add(report, where, f"values outside [{_bound(low, '-inf')}, {_bound(high, 'inf')}]", bad, names, step)
        if prop.kind in VECTOR_KINDS and prop.name in LENGTHS:
            shortest, longest = LENGTHS[prop.name]
            bad = [
                i
                for i, v in enumerate(values)
                if v is not None and not shortest <= float(np.linalg.norm(np.asarray(v, dtype=np.float64))) <= longest
            ]
            _add(report, where, f"vectors of length outside [{shortest:g}, {longest:g}]", bad, names, step)
    if owner == "Paper" and "cocite_probs" in table.column_names and "cocite_partners" in table.column_names:
        probs, partners = table.column("cocite_probs").to_pylist(), table.column("cocite_partners").to_pylist()
        bad = [
            i
            for i, (p, q) in enumerate(zip(probs, partners))
            if (p is None) != (q is None) or (p is not None and (len(p) != len(q) or sum(p) > 1 + 1e-6))
        ]
        _add(
            report,
            "Paper.cocite_probs",
            "lists not matching cocite_partners or summing over 1",
            bad,
            names,
            STEPS["cocite_probs"],
        )


def _cocited_rules(table: pa.Table, names: list[str], report: CheckReport) -> None:
    source, target = table.column("source").to_pylist(), table.column("target").to_pylist()
    _add(
        report,
        "CO_CITED",
        "pairs not stored as source < target",
        [i for i, (s, t) in enumerate(zip(source, target)) if not s < t],
        names,
        STEPS["CO_CITED"],
    )
    if all(c in table.column_names for c in ("jaccard", "cosine", "inclusion")):
        rows = zip(*(table.column(c).to_pylist() for c in ("jaccard", "cosine", "inclusion")))
        bad = [
            i
            for i, (j, c, n) in enumerate(rows)
            if None not in (j, c, n) and np.isfinite([j, c, n]).all() and not (j <= c + 1e-9 and c <= n + 1e-9)
        ]
        _add(report, "CO_CITED", "pairs without jaccard <= cosine <= inclusion", bad, names, STEPS["CO_CITED"])


def _within(value: object, low: float | None, high: float | None) -> bool:
    items = value if isinstance(value, list) else [value]
    for item in items:
        if item is None:
            continue
        number = float(item)  # type: ignore[arg-type]
        if not np.isfinite(number):
            continue  # reported as not finite, not twice
        if (low is not None and number < low) or (high is not None and number > high):
            return False
    return True


def _bound(value: float | None, unbounded: str) -> str:
    return unbounded if value is None else f"{value:g}"


def _add(report: CheckReport, where: str, problem: str, rows: list[int], names: list[str], step: str | None) -> None:
    if not rows:
        return
    examples = tuple(str(names[i]) for i in rows[:3])
    for i, finding in enumerate(report.findings):  # one finding per property and problem, over every batch
        if finding.where == where and finding.problem == problem:
            report.findings[i] = Finding(where, problem, finding.count + len(rows), finding.examples, step)
            return
    report.findings.append(Finding(where, problem, len(rows), examples, step))


__all__ = ["BATCH_KEYS", "CheckReport", "Finding", "check_store"]
