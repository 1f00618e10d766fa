"""One work, one node: a work stored twice merged into one, and a withdrawn work deleted.

A work can reach the store under two keys: a cited reference stored as a stub (``ref:…``) before the
record of that work came in with its own id (``doi:…``, ``wos:…``), or two OpenAlex works that OpenAlex
later merged (its snapshot's ``merged_ids``). :func:`merge_works` makes them one node: :func:`plan_merge` reads what
to change and :meth:`graph.store.GraphStore.apply_change` (each backend's own) applies it in one transaction (the embedded store: one
transaction, or the staged copy a streamed load writes; Neo4j: one managed transaction):

* every edge of the loser, in every relationship table with ``Paper`` at an end (:data:`PAPER_RELS`: CITES in
  and out, WROTE, HAS_SENTENCE, MENTIONS, CO_CITED, IN_CATEGORY, IN_CLASS, ALIAS_OF, HAS_KEYWORD, AFFILIATION,
  IN_COUNTRY), is moved to the survivor; an edge the survivor already has (same ends and identity: a paper
  that cited both keeps one CITES) keeps the survivor's values, and an edge that would join the survivor to
  itself (the loser citing the survivor) is dropped. A CO_CITED pair is re-ordered so that source < target,
  as the co-citation step stores it; its counts are recomputed from CITES by that step, not here;
* the loser's id becomes an ``Alias`` of the survivor, and the loser's aliases follow it (ALIAS_OF moved); an
  alias equal to the survivor's key is removed (it says nothing);
* the survivor keeps its own values; where it lacks one of :data:`MERGED_PROPERTIES` it takes the loser's,
  and it is a stub only if both were. A stub loser gives nothing to a full survivor: a stub's values were
  parsed from a citation, and the record's own metadata wins (as :mod:`graph.aliases` treats a stub row of a
  stored full paper, so that loading the stub first or the record first gives the same node). Computed
  properties (embeddings, co-citation partners, clusters, bursts) are the survivor's until the compute steps
  run again;
* the loser's sentences keep their ids (``<loser>#<sid>``) and take the survivor as their ``paper_id``;
* the loser node is deleted.

Both ids are resolved first (:func:`graph.aliases.stored_keys`): an id that is an alias names its paper.
Merging again finds the loser's id already an alias of the survivor and changes nothing. A survivor the
store does not hold takes the loser's node: the loser is re-keyed to the survivor's id when the node was
keyed by the loser's id, else (the node is keyed by another id, say its DOI) the survivor's id is added
as an alias of it.

:func:`delete_work` removes a work (OpenAlex: a withdrawn or deleted work) with what only it supported: its
edges, its sentences, its aliases that name no other paper, and the stubs that only it cites (with their
own aliases). Deleting it again finds nothing and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from graph.aliases import ALIAS, ALIAS_OF, PAPER, SENTENCE, alias_kind, stored_keys
from graph.errors import ConfigError
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN, RelType, Schema
from graph.statements import identifier
from graph.store import GraphStore, WorkChange

# Paper properties a survivor takes from the loser where it has none: what a source says of the work.
MERGED_PROPERTIES = (
    "title",
    "abstract",
    "summary",
    "year",
    "venue",
    "doi",
    "arxiv_id",
    "dataset",
    "reference",
    "label",
    "volume",
    "first_page",
    "type",
)
CO_CITED = "CO_CITED"  # stored once per unordered pair, source < target (gnn.cocitation)
_ORIGIN = "merged into another work"


def paper_rels(schema: Schema) -> list[RelType]:
    """Every relationship type with ``Paper`` at one end or both, in schema order."""
    return [rel for rel in schema.rels.values() if PAPER in (rel.source, rel.target)]


@dataclass(frozen=True)
class WorkMerge:
    """What :func:`merge_works` did.

    ``outcome``: ``merged`` (two nodes made one), ``renamed`` (the survivor was not stored: the loser's node
    re-keyed to it), ``aliased`` (the survivor was not stored and the loser's node is keyed by a third id:
    the survivor's id added as its alias), ``already merged`` (the loser's id names the survivor already:
    nothing changed), ``absent`` (the store holds no paper by the loser's id: nothing changed).
    """

    loser: str
    survivor: str
    outcome: str
    moved: dict[str, int] = field(default_factory=dict)  # edges moved to the survivor, by type
    kept: dict[str, int] = field(default_factory=dict)  # loser's edges the survivor had already (dropped), by type
    taken: tuple[str, ...] = ()  # properties the survivor took from the loser

    @property
    def changed(self) -> bool:
        return self.outcome in ("merged", "renamed", "aliased")

    def summary(self) -> str:
        if not self.changed:
            return f"{self.loser} -> {self.survivor}: {self.outcome}, nothing changed"
        moved = ", ".join(f"{n} {t}" for t, n in self.moved.items() if n) or "no edges"
        kept = sum(self.kept.values())
        taken = f"; took {', '.join(self.taken)}" if self.taken else ""
        return f"{self.loser} -> {self.survivor}: {self.outcome}; moved {moved}; {kept} edge(s) the survivor had{taken}"


@dataclass(frozen=True)
class WorkDeletion:
    """What :func:`delete_work` did: the papers (the work and the stubs only it cited),
    sentences and aliases deleted; ``absent`` when the store holds no paper by that id."""

    id: str
    papers: tuple[str, ...] = ()
    sentences: int = 0
    aliases: int = 0

    @property
    def absent(self) -> bool:
        return not self.papers

    def summary(self) -> str:
        if self.absent:
            return f"{self.id}: absent, nothing deleted"
        return (
            f"{self.id}: deleted {len(self.papers)} paper(s) (the work and {len(self.papers) - 1} stub(s) only it "
            f"cited), {self.sentences} sentence(s), {self.aliases} alias(es)"
        )


def _require_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{what} must be a non-empty paper id, got {value!r}")
    return value


def _edges(store: GraphStore, rel: RelType, statement: str, key: str) -> pd.DataFrame:
    identifiers = {
        "SOURCE": identifier(rel.source),
        "SOURCE_KEY": identifier(store.schema.node(rel.source).key),
        "TYPE": identifier(rel.type),
        "TARGET": identifier(rel.target),
        "TARGET_KEY": identifier(store.schema.node(rel.target).key),
        "COLUMNS": "".join(f", r.{identifier(p.name)} AS {p.name}" for p in rel.properties),
    }
    columns = [SOURCE_COLUMN, TARGET_COLUMN, *(p.name for p in rel.properties)]
    rows = store.query(statement, {"keys": [key]}, identifiers)
    return pd.DataFrame([[row[c] for c in columns] for row in rows], columns=columns)


def _edges_of(store: GraphStore, rel: RelType, key: str) -> pd.DataFrame:
    """Every edge of ``rel`` with the paper ``key`` at an end (an edge from it to itself once)."""
    parts = []
    if rel.source == PAPER:
        parts.append(_edges(store, rel, "rels_from_keys", key))
    if rel.target == PAPER:
        incoming = _edges(store, rel, "rels_to_keys", key)
        if rel.source == PAPER:
            incoming = incoming[incoming[SOURCE_COLUMN] != key]
        parts.append(incoming)
    return pd.concat(parts, ignore_index=True)


def _identity(frame: pd.DataFrame, rel: RelType) -> pd.Series:
    """One hashable key per edge: its ends and identity properties (a null identity as "")."""
    columns = [frame[c].where(frame[c].notna(), "").astype(str) for c in rel.key_columns]
    return pd.Series(list(zip(*columns)), index=frame.index, dtype=object)


def _paper(store: GraphStore, key: str) -> dict[str, object] | None:
    node = store.schema.node(PAPER)
    names = [name for name in (*MERGED_PROPERTIES, "stub") if name in {p.name for p in node.properties}]
    identifiers = {
        "LABEL": PAPER,
        "KEY": identifier(node.key),
        "NODE_COLUMNS": "".join(f", n.{identifier(name)} AS {name}" for name in names),
    }
    rows = store.query("nodes_by_keys", {"keys": [key]}, identifiers)
    return rows[0] if rows else None


def _known(value: object) -> bool:
    return value is not None and not (isinstance(value, float) and pd.isna(value)) and value != ""


def plan_merge(store: GraphStore, loser_id: str, survivor_id: str) -> tuple[WorkChange, WorkMerge]:
    """The change that merges the work ``loser_id`` into ``survivor_id`` (module docstring), and its account."""
    loser_id, survivor_id = _require_id(loser_id, "the merged work"), _require_id(survivor_id, "the surviving work")
    keys = stored_keys(store, [loser_id, survivor_id])
    loser_key, survivor_key = keys.get(loser_id), keys.get(survivor_id)
    if loser_key is None:
        return WorkChange(), WorkMerge(loser_id, survivor_id, "absent")
    if loser_key == survivor_key:
        return WorkChange(), WorkMerge(loser_id, survivor_id, "already merged")
    loser = _paper(store, loser_key)
    assert loser is not None  # stored_keys found it
    if survivor_key is None and loser_key != loser_id:
        # the loser's node is keyed by a third id (its DOI): the survivor's id becomes one more alias of it
        change = WorkChange(
            nodes={ALIAS: _alias_rows([survivor_id])},
            rels={ALIAS_OF: _rows({SOURCE_COLUMN: [survivor_id], TARGET_COLUMN: [loser_key]})},
        )
        return change, WorkMerge(loser_id, survivor_id, "aliased", moved={ALIAS_OF: 1})
    survivor_key = survivor_key or survivor_id
    survivor = _paper(store, survivor_key)
    nodes: dict[str, pd.DataFrame] = {}
    taken: list[str] = []
    if survivor is None:  # renamed: the survivor is the loser's node under the survivor's id
        values = {name: value for name, value in loser.items() if name != "key" and _known(value)}
        taken = [name for name in values if name != "stub"]
        nodes[PAPER] = _rows({"id": [survivor_key], **{name: [value] for name, value in values.items()}})
    else:
        loser_stub, survivor_stub = loser.get("stub") is True, survivor.get("stub") is True
        values = {}
        if not (loser_stub and not survivor_stub):  # a stub gives nothing to a full record
            values = {
                name: loser[name]
                for name in MERGED_PROPERTIES
                if name in loser and _known(loser[name]) and not _known(survivor.get(name))
            }
            taken = list(values)
        if survivor_stub and not loser_stub:
            values["stub"] = False
        if values:
            nodes[PAPER] = _rows({"id": [survivor_key], **{name: [value] for name, value in values.items()}})
    rels: dict[str, pd.DataFrame] = {}
    moved: dict[str, int] = {}
    kept: dict[str, int] = {}
    alias_deletes: list[str] = []
    for rel in paper_rels(store.schema):
        edges = _edges_of(store, rel, loser_key)
        if edges.empty:
            continue
        for column, label in ((SOURCE_COLUMN, rel.source), (TARGET_COLUMN, rel.target)):
            if label == PAPER:
                edges[column] = edges[column].where(edges[column] != loser_key, survivor_key)
        if rel.source == PAPER and rel.target == PAPER:
            edges = edges[edges[SOURCE_COLUMN] != edges[TARGET_COLUMN]]  # the survivor would cite itself
            if rel.type == CO_CITED:
                swap = edges[SOURCE_COLUMN] > edges[TARGET_COLUMN]
                edges.loc[swap, [SOURCE_COLUMN, TARGET_COLUMN]] = edges.loc[swap, [TARGET_COLUMN, SOURCE_COLUMN]].values
        if rel.type == ALIAS_OF:
            itself = edges[SOURCE_COLUMN] == survivor_key  # an alias equal to its paper's key
            alias_deletes += edges.loc[itself, SOURCE_COLUMN].tolist()
            edges = edges[~itself]
        edges = edges.drop_duplicates(subset=list(rel.key_columns))
        if survivor is not None:
            stored = _edges_of(store, rel, survivor_key)
            if not stored.empty:
                already = _identity(edges, rel).isin(set(_identity(stored, rel)))
                kept[rel.type] = int(already.sum())
                edges = edges[~already.to_numpy()]
        if len(edges):
            rels[rel.type] = edges.reset_index(drop=True)
            moved[rel.type] = len(edges)
    if SENTENCE in store.schema.nodes and "HAS_SENTENCE" in rels:
        nodes[SENTENCE] = _rows(
            {"id": rels["HAS_SENTENCE"][TARGET_COLUMN].tolist(), "paper_id": survivor_key}  # type: ignore[dict-item]
        )
    nodes[ALIAS] = _alias_rows([loser_key])
    loser_alias = _rows({SOURCE_COLUMN: [loser_key], TARGET_COLUMN: [survivor_key]})
    rels[ALIAS_OF] = pd.concat([rels.get(ALIAS_OF, loser_alias.iloc[:0]), loser_alias], ignore_index=True)
    moved[ALIAS_OF] = moved.get(ALIAS_OF, 0)
    deletes = {PAPER: [loser_key], ALIAS: sorted(set(alias_deletes))}
    outcome = "renamed" if survivor is None else "merged"
    change = WorkChange(deletes, nodes, {t: f.assign(**{ORIGIN_COLUMN: _ORIGIN}) for t, f in rels.items()})
    return change, WorkMerge(loser_id, survivor_id, outcome, moved, kept, tuple(taken))


def plan_delete(store: GraphStore, paper_id: str) -> tuple[WorkChange, WorkDeletion]:
    """The change that removes the work ``paper_id`` with what only it supported (module docstring)."""
    paper_id = _require_id(paper_id, "the deleted work")
    key = stored_keys(store, [paper_id]).get(paper_id)
    if key is None:
        return WorkChange(), WorkDeletion(paper_id)
    stubs = sorted(str(row["id"]) for row in store.query("stubs_cited_only_by", {"ids": [key]}))
    papers = [key, *stubs]
    aliases = sorted({str(row["id"]) for row in store.query("aliases_only_of", {"ids": papers})})
    sentences: list[str] = []
    if "HAS_SENTENCE" in store.schema.rels:
        sentences = sorted(_edges(store, store.schema.rel("HAS_SENTENCE"), "rels_from_keys", key)[TARGET_COLUMN])
    deletes = {PAPER: papers, ALIAS: aliases, SENTENCE: sentences}
    return WorkChange(deletes=deletes), WorkDeletion(paper_id, tuple(papers), len(sentences), len(aliases))


def merge_works(store: GraphStore, loser_id: str, survivor_id: str) -> WorkMerge:
    """Merge the work ``loser_id`` into ``survivor_id``, all or nothing (module docstring); what was done."""
    change, merge = plan_merge(store, loser_id, survivor_id)
    if not change.empty:
        store.apply_change(change)
    return merge


def delete_work(store: GraphStore, paper_id: str) -> WorkDeletion:
    """Delete the work ``paper_id`` and what only it supported, all or nothing (module docstring)."""
    change, deletion = plan_delete(store, paper_id)
    if not change.empty:
        store.apply_change(change)
    return deletion


@dataclass(frozen=True)
class WorkChanges:
    """What :func:`apply_work_changes` did to a list of merges and deletions (OpenAlex's merged_ids)."""

    merged: int = 0  # merged works the store held, now aliases of their survivors
    deleted: int = 0  # deleted works the store held, removed with what only they supported
    already: int = 0  # merges found done already (the merged id names its survivor)
    absent: int = 0  # merged or deleted works the store does not hold: nothing to do

    def summary(self) -> str:
        return (
            f"merged works: {self.merged} merged into their survivors, {self.deleted} deleted, "
            f"{self.already} merged before, {self.absent} not in the store"
        )


def apply_work_changes(store: GraphStore, changes: list[tuple[str, str | None]]) -> WorkChanges:
    """Merge each ``(merged, survivor)`` of ``changes`` (:func:`merge_works`), delete each ``(deleted, None)``
    (:func:`delete_work`), in order; each its own transaction, so a stop half-way leaves some applied and a
    rerun applies the rest (both are idempotent). The ids the store does not hold are found in one lookup
    first: a snapshot lists millions of merges, a store holds few of them."""
    held = stored_keys(store, [loser for loser, _ in changes])
    merged = deleted = already = absent = 0
    for loser, survivor in changes:
        if loser not in held:
            absent += 1
        elif survivor is None:
            deleted += 0 if delete_work(store, loser).absent else 1
        else:
            outcome = merge_works(store, loser, survivor).outcome
            merged += outcome in ("merged", "renamed", "aliased")
            already += outcome == "already merged"
            absent += outcome == "absent"  # merged away by an earlier line
    return WorkChanges(merged, deleted, already, absent)


def _rows(columns: dict[str, list[object]]) -> pd.DataFrame:
    return pd.DataFrame(columns)


def _alias_rows(ids: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"id": ids, "kind": [alias_kind(i) for i in ids], ORIGIN_COLUMN: _ORIGIN})


__all__ = [
    "MERGED_PROPERTIES",
    "WorkChanges",
    "WorkDeletion",
    "WorkMerge",
    "apply_work_changes",
    "delete_work",
    "merge_works",
    "paper_rels",
    "plan_delete",
    "plan_merge",
]
