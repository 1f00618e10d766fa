"""Which units of analysis a store can map: a unit's map is counted from one relationship, and a store whose
sources gave none of it has nothing to draw (an empty map that looks like a failed filter).

:func:`unit_status` counts each unit's relationship once (``count_rels``: a count per type, no scan of the
nodes) and says, for a unit without it, the command that puts it in the store, so the dashboard offers only
the units there is something to draw for, and names what to load for the others.
"""

from __future__ import annotations

from dataclasses import dataclass

from gnn.mapping.networks import UNIT_BUILDERS, MapUnit
from graph.store import GraphStore

EXPORTS = "citegraph ingest wos|scopus|openalex PATH"  # the bibliographic exports that carry every unit
# The relationship each unit's map is counted from, and what loads it.
UNIT_SOURCES: dict[MapUnit, tuple[str, str]] = {
    MapUnit.REFERENCES: ("CITES", f"load documents with their cited references: {EXPORTS} (or crossref, jsonl)"),
    MapUnit.AUTHORS: ("CITES", f"load documents with their cited references: {EXPORTS} (or crossref, jsonl)"),
    MapUnit.SOURCES: ("CITES", f"load documents with their cited references: {EXPORTS} (or crossref, jsonl)"),
    MapUnit.COUPLING: ("CITES", f"load documents with their cited references: {EXPORTS} (or crossref, jsonl)"),
    MapUnit.COAUTHORS: ("WROTE", f"load documents with their authors: {EXPORTS}"),
    MapUnit.INSTITUTIONS: (
        "AFFILIATION",
        f"load documents with affiliations (Web of Science C1, Scopus Affiliations, OpenAlex institutions): {EXPORTS}",
    ),
    MapUnit.COUNTRIES: (
        "IN_COUNTRY",
        f"load documents with affiliations (Web of Science C1, Scopus Affiliations, OpenAlex institutions): {EXPORTS}",
    ),
    MapUnit.KEYWORDS: (
        "HAS_KEYWORD",
        f"load documents with keywords (author keywords, Keywords Plus, OpenAlex topics): {EXPORTS}",
    ),
}


@dataclass(frozen=True)
class UnitStatus:
    """Whether ``unit`` can be mapped on this store; ``command`` says what to run when it cannot."""

    unit: MapUnit
    built: bool
    links: int  # relationships its map is counted from
    command: str | None  # what loads them (None when built)


def unit_status(store: GraphStore) -> list[UnitStatus]:
    """Every unit, in :class:`MapUnit` order: built when it has a builder and its relationship is in the store."""
    counts: dict[str, int] = {}
    out = []
    for unit in MapUnit:
        rel, command = UNIT_SOURCES[unit]
        if rel not in counts:
            counts[rel] = store.count_rels(rel) if rel in store.schema.rels else 0
        registered = unit in UNIT_BUILDERS
        built = registered and counts[rel] > 0
        if not registered:
            command = f"this version has no builder for {unit.value}; upgrade citegraph"
        out.append(UnitStatus(unit, built, counts[rel], None if built else command))
    return out


__all__ = ["UNIT_SOURCES", "UnitStatus", "unit_status"]
