"""Ids that already name a stored paper: a batch re-keyed onto the papers the store holds.

Sources name one work by different ids: the Anthology by ``P98-1081``, Crossref by its DOI,
OpenAlex by ``openalex:W…``. A loader keys each work by the most specific id it has
(:data:`loaders.ids.ID_PREFERENCE`) and lists the others as ``Alias`` nodes; it never reads the
store. Before validation, :func:`resolve_stored_ids` looks every paper id of a batch up in the
store, and an id that names a stored paper under another key is re-keyed to that key:

1. an id that is a stored Paper key stays as it is;
2. an id that is a stored ``Alias`` takes the key that alias points at;
3. a ``doi:…`` / ``arxiv:…`` id whose value is a stored paper's ``doi`` / ``arxiv_id`` property
   takes that paper's key (papers of loaders that predate aliases carry their DOIs that way);
4. a batch paper none of whose own ids is known by rules 1-3, but one of whose aliases (its
   ``ALIAS_OF`` rows in the batch) is, takes the key that alias names.

Ids of the ``ref:`` family (:mod:`loaders.refmatch`: a cited work's reference key ``ref:goosf1947annphysberlin``
and field key ``ref:<source initials>-v<volume>-p<first page>``) name a work by what a reference string says
of it, and two works can share one (two papers on one page of a volume, in different years). A join through
one (rules 2 and 4) is made only when the batch paper and the stored one agree where both know it: years at
most one apart (a year misprinted by one, as the matching of a load allows), first authors one name (the
surname of their ``label``, compared as letters: equal, one a truncation of the other, or one edit per five
letters). A join refused keeps the batch paper apart, and the batch's own ``ALIAS_OF`` rows of that key
are dropped (the key stays the stored paper's).

A paper keyed by an id of its own (a record's ``doi:…`` or ``wos:…``, a cited work's DOI) is never re-keyed
onto a stored stub of the ``ref:`` family: when rule 4 (or, for a paper stored before, its own alias) names
such a stub and the checks above agree, the paper keeps its own key and the stub is merged into it after the
batch is written (:attr:`Rekeying.stub_merges`, applied by
:func:`graph.works.merge_works`: the stub's edges move to the record, its key and aliases become the record's
aliases). So a work cited before its record is loaded ends as the same node, under the same key, as a work
whose record came first.

A re-keyed id is kept as an ``Alias`` of the stored paper, so the id the user's source gave still
finds it. Sentence ids (``<paper key>#…``) follow their paper. A stub row (``stub = true``) for a
paper the store holds as a full paper does not turn it back into a stub nor overwrite its metadata
(every property of the row becomes null, and a null keeps the stored value).

Running the same batch twice re-keys it the same way: the first run stored the aliases and keys
the second looks up.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from graph.errors import CitegraphError
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN, Schema
from graph.store import GraphStore

log = logging.getLogger(__name__)

PAPER = "Paper"
SENTENCE = "Sentence"
ALIAS = "Alias"
ALIAS_OF = "ALIAS_OF"
_DOI, _ARXIV = "doi:", "arxiv:"  # the prefixes of loaders.ids (the store does not import loaders)
_LOOKUP_CHUNK = 50_000  # ids per lookup statement: bounds the parameter list
_FEW = 1_000  # up to this many ids, keys are checked through the key index rather than a scan of all keys


def stored_keys(store: GraphStore, ids: Iterable[str]) -> dict[str, str]:
    """``{id: stored paper key}`` for each of ``ids`` that names a stored paper (rules 1-3 above).

    >>> # stored_keys(store, ["P98-1081", "doi:10.3115/980845.980860", "nope"])
    >>> # -> {"P98-1081": "P98-1081", "doi:10.3115/980845.980860": "P98-1081"}
    """
    wanted = pd.Series(sorted({i for i in ids if isinstance(i, str)}), dtype=object)
    if wanted.empty:
        return {}
    if len(wanted) <= _FEW:  # a user's few ids: key-index lookups, not a scan of every key
        stored = {str(r["id"]) for r in store.query("paper_stub_flags", {"ids": list(wanted)})}
        is_key = wanted.isin(stored).to_numpy()
    else:
        is_key = store.has_nodes(PAPER, wanted)
    found = {key: key for key in wanted[is_key]}
    rest = [i for i in wanted[~is_key]]
    for start in range(0, len(rest), _LOOKUP_CHUNK):
        chunk = rest[start : start + _LOOKUP_CHUNK]
        for row in _alias_rows(store, chunk):
            found.setdefault(str(row["alias"]), str(row["key"]))
        dois = [i[len(_DOI) :] for i in chunk if i.startswith(_DOI) and i not in found]
        arxiv_ids = [i[len(_ARXIV) :] for i in chunk if i.startswith(_ARXIV) and i not in found]
        if dois or arxiv_ids:
            for row in store.query("papers_by_external_ids", {"dois": dois, "arxiv_ids": arxiv_ids}):
                if row["doi"] and row["doi"] in dois:
                    found.setdefault(_DOI + str(row["doi"]), str(row["key"]))
                if row["arxiv_id"] and row["arxiv_id"] in arxiv_ids:
                    found.setdefault(_ARXIV + str(row["arxiv_id"]), str(row["key"]))
    return found


def _alias_rows(store: GraphStore, ids: list[str]) -> list[dict[str, object]]:
    if ALIAS not in store.schema.nodes:
        return []
    try:
        return store.query("papers_by_aliases", {"ids": ids})
    except CitegraphError:
        if store.read_only:  # a store written before aliases existed, opened without the right to add them
            return []
        raise


@dataclass(frozen=True)
class Rekeying:
    """What :func:`resolve_stored_ids` did: old key -> stored key, stub flags it cleared, and the stored ``ref:``
    stubs to merge into the batch's full records once it is written (stub key -> record key)."""

    rekeyed: dict[str, str]
    stubs_kept_full: int
    stub_merges: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        return (
            f"{len(self.rekeyed)} paper id(s) named papers already stored under another key and were merged "
            f"into them; {self.stubs_kept_full} stub record(s) of stored full papers left them full; "
            f"{len(self.stub_merges)} stored stub(s) to merge into the records of their works"
        )


def resolve_stored_ids(
    store: GraphStore, batch_nodes: dict[str, pd.DataFrame], batch_rels: dict[str, pd.DataFrame]
) -> Rekeying:
    """Re-key the batch's tables in place onto the store's papers (see the module docstring)."""
    schema = store.schema
    paper_rels = [t for t in batch_rels if PAPER in (schema.rel(t).source, schema.rel(t).target)]
    ids: set[str] = set()
    if PAPER in batch_nodes:
        ids.update(_strings(batch_nodes[PAPER]["id"]))
    for rel_type in paper_rels:
        rel = schema.rel(rel_type)
        for column, label in ((SOURCE_COLUMN, rel.source), (TARGET_COLUMN, rel.target)):
            if label == PAPER:
                ids.update(_strings(batch_rels[rel_type][column]))
    paper_ids = set(ids)  # the ids the batch keys papers by; its aliases follow
    aliases_of: dict[str, list[str]] = {}  # batch paper key -> its aliases in the batch
    if ALIAS_OF in batch_rels:
        frame = batch_rels[ALIAS_OF]
        for alias, key in zip(frame[SOURCE_COLUMN], frame[TARGET_COLUMN]):
            if isinstance(alias, str) and isinstance(key, str):
                aliases_of.setdefault(key, []).append(alias)
                ids.add(alias)
    known = stored_keys(store, ids)
    checks = _ReferenceChecks(store, batch_nodes.get(PAPER), known)
    # An alias the store already has names its stored paper, which rule 4 follows: only paper ids are re-keyed
    # (a stub's aliases, written by an earlier batch of a streamed load, merge nothing).
    rekeyed = {
        old: new for old, new in known.items() if old != new and old in paper_ids and checks.agree(old, old, new)
    }
    stub_merges: dict[str, str] = {}
    for key, aliases in aliases_of.items():  # rule 4: a new key whose alias the store knows
        if key in known:
            if known[key] == key and checks.has_own_key(key):  # a record stored before: its stub may remain
                for alias in aliases:
                    stub = known.get(alias)
                    if (
                        stub is not None
                        and stub != key
                        and checks.is_reference_stub(stub)
                        and checks.agree(alias, key, stub)
                    ):
                        stub_merges.setdefault(stub, key)
            continue
        target = next((known[a] for a in aliases if a in known and checks.agree(a, key, known[a])), None)
        if target is not None and target != key:
            if checks.is_reference_stub(target) and checks.has_own_key(key):
                stub_merges.setdefault(target, key)  # the record keeps its key; the stub is merged into it
            else:
                rekeyed[key] = target
    if checks.refused:
        _drop_refused_aliases(batch_rels, checks.refused)
    if rekeyed:
        _apply(batch_nodes, batch_rels, rekeyed, paper_rels, schema)
    kept = _keep_stored_papers_full(store, batch_nodes)
    result = Rekeying(rekeyed, kept, stub_merges)
    if rekeyed or kept or stub_merges:
        log.info("%s", result.summary())
    return result


_REFERENCE = "ref:"  # the prefix of ids built from what reference strings say (loaders.ids.REFERENCE_PREFIX)
_LETTERS = re.compile(r"[^\W\d_]+")
_INITIALS_TOKEN = re.compile(r"(?:[A-Z]\.?-?){1,4}")


class _ReferenceChecks:
    """Whether a join through a ``ref:`` id joins one work (module docstring), with the refused ids kept, and
    which papers are ``ref:`` stubs (stored) or keyed by ids of their own (in the batch)."""

    def __init__(self, store: GraphStore, papers: pd.DataFrame | None, known: dict[str, str]) -> None:
        self.store = store
        self.batch: dict[str, tuple[object, object]] = {}
        if papers is not None and "id" in papers:
            years = papers["year"] if "year" in papers else pd.Series([None] * len(papers))
            labels = papers["label"] if "label" in papers else pd.Series([None] * len(papers))
            for key, year, label in zip(papers["id"], years, labels):
                self.batch.setdefault(str(key), (year, label))
        wanted = sorted({new for old, new in known.items() if old.startswith(_REFERENCE)})
        self.stored: dict[str, tuple[object, object]] = {}
        self.stored_stubs: set[str] = set()
        for start in range(0, len(wanted), _LOOKUP_CHUNK):
            for row in store.query("paper_match_facts", {"ids": wanted[start : start + _LOOKUP_CHUNK]}):
                self.stored[str(row["id"])] = (row["year"], row["label"])
                if row["stub"] is True:
                    self.stored_stubs.add(str(row["id"]))
        self.refused: set[str] = set()

    def is_reference_stub(self, stored_key: str) -> bool:
        """Whether the stored paper ``stored_key`` is a stub keyed by a reference (``ref:…``), looked up here."""
        return stored_key.startswith(_REFERENCE) and stored_key in self.stored_stubs

    def has_own_key(self, key: str) -> bool:
        """Whether batch paper ``key`` is keyed by an id a source gave the work (a record's, or a cited work's
        DOI), not by what a reference string says of it (``ref:``)."""
        return key in self.batch and not key.startswith(_REFERENCE)

    def agree(self, via: str, key: str, stored_key: str) -> bool:
        """Whether batch paper ``key`` may join stored paper ``stored_key`` through the id ``via``."""
        if not via.startswith(_REFERENCE) or key == stored_key:
            return True
        (year, label), (stored_year, stored_label) = (
            self.batch.get(key, (None, None)),
            self.stored.get(stored_key, (None, None)),
        )
        ok = _years_agree(year, stored_year) and _authors_agree(_label_surname(label), _label_surname(stored_label))
        if not ok:
            self.refused.add(via)
            log.info("%s: not joined to %s through %s (year or first author differ)", key, stored_key, via)
        return ok


def _year(value: object) -> int | None:
    try:
        return None if value is None or pd.isna(value) else int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return None


def _years_agree(a: object, b: object) -> bool:
    x, y = _year(a), _year(b)
    return x is None or y is None or abs(x - y) <= 1


def _label_surname(label: object) -> str | None:
    """The first author's surname in a label "Goos F, 1947, …" as lower-case letters; None without one (a label
    that starts with the year, or no label)."""
    if not isinstance(label, str) or ", " not in label:
        return None
    first = label.split(", ", 1)[0].split()
    if not first or first[0][:1].isdigit():
        return None
    while len(first) > 1 and _INITIALS_TOKEN.fullmatch(first[-1]):
        first = first[:-1]
    letters = "".join(_LETTERS.findall(" ".join(first).lower()))
    return letters or None


def _edits(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, start=1):
        current = [i]
        for j, cb in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def _authors_agree(a: str | None, b: str | None) -> bool:
    """One surname written two ways: equal, one the start of the other (WoS cuts long names: COSTADEB), or one
    edit per five letters (FEDEROV / FEDOROV); unknown on either side: yes."""
    if a is None or b is None or a == b:
        return True
    short, long = sorted((a, b), key=len)
    if len(short) >= 6 and long.startswith(short):
        return True
    return abs(len(a) - len(b)) <= 1 and _edits(a, b) <= max(1, len(short) // 5)


def _drop_refused_aliases(rels: dict[str, pd.DataFrame], refused: set[str]) -> None:
    """The batch's ``ALIAS_OF`` rows of keys whose join was refused: the key stays the stored paper's."""
    frame = rels.get(ALIAS_OF)
    if frame is not None:
        rels[ALIAS_OF] = frame[~frame[SOURCE_COLUMN].isin(refused)].reset_index(drop=True)


def _strings(column: pd.Series) -> Iterable[str]:
    return (value for value in column if isinstance(value, str))


def _apply(nodes, rels, rekeyed, paper_rels, schema) -> None:
    def rename(value: object) -> object:
        return rekeyed.get(value, value) if isinstance(value, str) else value

    def rename_sentence(value: object) -> object:
        if not isinstance(value, str) or "#" not in value:
            return value
        paper, _, rest = value.partition("#")
        return f"{rekeyed[paper]}#{rest}" if paper in rekeyed else value

    if PAPER in nodes:
        nodes[PAPER] = nodes[PAPER].assign(id=nodes[PAPER]["id"].map(rename))
    if SENTENCE in nodes:
        frame = nodes[SENTENCE]
        changes = {"id": frame["id"].map(rename_sentence)}
        if "paper_id" in frame:
            changes["paper_id"] = frame["paper_id"].map(rename)
        nodes[SENTENCE] = frame.assign(**changes)
    for rel_type, frame in list(rels.items()):
        rel = schema.rel(rel_type)
        changes = {}
        for column, label in ((SOURCE_COLUMN, rel.source), (TARGET_COLUMN, rel.target)):
            if label == PAPER:
                changes[column] = frame[column].map(rename)
            elif label == SENTENCE:
                changes[column] = frame[column].map(rename_sentence)
        if changes:
            rels[rel_type] = frame.assign(**changes)
    _join_rekeyed_duplicates(nodes, rels, set(rekeyed.values()), schema)
    # The ids given up as keys stay findable: each becomes an alias of the stored paper.
    _add_aliases(nodes, rels, rekeyed)


def _join_rekeyed_duplicates(
    nodes: dict[str, pd.DataFrame], rels: dict[str, pd.DataFrame], targets: set[str], schema: Schema
) -> None:
    """Rows that re-keying made one: two batch papers whose ids now name one stored paper (a work cited by
    two ids that a merge made one, OpenAlex's merged works) are one row, each column its first known value
    (a stub only if every row was one); their edges to a third paper are one edge. Rows repeated in the
    batch itself are left for validation to reject."""
    papers = nodes.get(PAPER)
    if papers is not None and "id" in papers:
        twice = papers["id"].isin(targets) & papers["id"].duplicated(keep=False)
        if twice.any():
            rows = papers[twice]
            joined = rows.groupby("id", sort=False).first().reset_index()
            if "stub" in rows:
                full = rows["stub"].ne(True).groupby(rows["id"], sort=False).any()
                joined["stub"] = ~joined["id"].map(full).astype(bool)
            nodes[PAPER] = pd.concat([papers[~twice], joined[list(papers.columns)]], ignore_index=True)
    for rel_type, frame in list(rels.items()):
        rel = schema.rel(rel_type)
        ends = [
            column for column, label in ((SOURCE_COLUMN, rel.source), (TARGET_COLUMN, rel.target)) if label == PAPER
        ]
        if not ends or frame.empty:
            continue
        keys = [column for column in rel.key_columns if column in frame]
        touched = np.logical_or.reduce([frame[column].isin(targets).to_numpy() for column in ends])
        again = frame.duplicated(subset=keys, keep="first").to_numpy() & touched
        if again.any():
            rels[rel_type] = frame[~again].reset_index(drop=True)


def _add_aliases(nodes: dict[str, pd.DataFrame], rels: dict[str, pd.DataFrame], rekeyed: dict[str, str]) -> None:
    from_ids = sorted(rekeyed)
    kinds = [alias_kind(i) for i in from_ids]
    extra_nodes = pd.DataFrame({"id": from_ids, "kind": kinds, ORIGIN_COLUMN: "re-keyed onto a stored paper"})
    extra_rels = pd.DataFrame(
        {
            SOURCE_COLUMN: from_ids,
            TARGET_COLUMN: [rekeyed[i] for i in from_ids],
            ORIGIN_COLUMN: "re-keyed onto a stored paper",
        }
    )
    alias_rows = pd.concat([nodes.get(ALIAS, pd.DataFrame()), extra_nodes], ignore_index=True)
    nodes[ALIAS] = alias_rows.drop_duplicates(subset="id", keep="first").reset_index(drop=True)
    links = pd.concat([rels.get(ALIAS_OF, pd.DataFrame()), extra_rels], ignore_index=True)
    links = links[links[SOURCE_COLUMN] != links[TARGET_COLUMN]]  # an alias equal to its key says nothing
    rels[ALIAS_OF] = links.drop_duplicates(subset=[SOURCE_COLUMN, TARGET_COLUMN], keep="first").reset_index(drop=True)
    linked = set(rels[ALIAS_OF][SOURCE_COLUMN])
    nodes[ALIAS] = nodes[ALIAS][nodes[ALIAS]["id"].isin(linked)].reset_index(drop=True)


def alias_kind(paper_id: str) -> str:
    """The alias kind from the id's prefix (``doi``, ``openalex``, …); ``own`` without one."""
    prefix, colon, _ = paper_id.partition(":")
    return prefix if colon and prefix.isalnum() and prefix.islower() else "own"


def _keep_stored_papers_full(store: GraphStore, nodes: dict[str, pd.DataFrame]) -> int:
    """Clear ``stub = true`` on batch rows of papers the store holds as full papers; how many."""
    papers = nodes.get(PAPER)
    if papers is None or "stub" not in papers:
        return 0
    stub_rows = papers["stub"].eq(True).fillna(False).astype(bool)
    ids = sorted({i for i in papers.loc[stub_rows, "id"] if isinstance(i, str)})
    full: set[str] = set()
    for start in range(0, len(ids), _LOOKUP_CHUNK):
        rows = store.query("paper_stub_flags", {"ids": ids[start : start + _LOOKUP_CHUNK]})
        full.update(str(r["id"]) for r in rows if r["stub"] is not True)
    if not full:
        return 0
    clear = stub_rows & papers["id"].isin(full)
    # A stub row says only that the work exists (its title, year, ... were parsed from a citation);
    # the stored paper's own metadata wins, so every property of such a row becomes null.
    kept = {ORIGIN_COLUMN, "id"}
    nodes[PAPER] = papers.assign(
        **{column: papers[column].astype(object).where(~clear, None) for column in papers.columns if column not in kept}
    )
    return int(clear.sum())


__all__ = ["Rekeying", "alias_kind", "resolve_stored_ids", "stored_keys"]
