"""How the cited works of any source's input are matched: to works of the input, to stubs, or not at all.

``citegraph references report SOURCE PATH`` reads the files only (no store), exactly as ``citegraph ingest``
parses them, and accounts for every citation the loader read (:class:`CitationCounts`):

* **matched**: the cited work is a work of the input itself (a record the export holds, an OpenAlex work of
  the same pages), so the citation joins two full papers;
* **stubbed**: the cited work is known only by the citation, as a stub paper: **by id** when the source names
  it by an identifier (a DOI, an OpenAlex or Semantic Scholar id), **by reference** when only its reference
  string says what it is (a ``ref:`` key of :mod:`loaders.refmatch`: source + volume + first page, or the
  reference's own key; in a JSON Lines file, a stub of your own id given with its ``reference``) — the joins
  to review, and to force or undo with a thesaurus;
* **unparsed**: a citation the loader could not turn into a cited work: the citations it rejected (an entry
  that is no work id, a work citing itself) and, where the loader counts them, the references that named no
  work (Crossref's and unarXive's ``unresolved``).

Each count comes with up to :data:`EXAMPLES` examples. The rows (one per cited work) have the columns of the
Web of Science / Scopus report (:data:`loaders.refmatch.REPORT_COLUMNS`), ``rules`` being ``record``, ``id``
or ``reference`` here: those sources match reference strings with several rules and say which joined a work.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from graph.ingest import GraphBatch
from graph.schema import SOURCE_COLUMN, TARGET_COLUMN
from loaders.ids import id_kind

EXAMPLES = 3  # examples kept per count
CITES = "CITES"


@dataclass
class CitationCounts:
    """Every citation of an input, by what its cited work is (module docstring); examples per count."""

    source: str
    citations: int = 0  # citations read: matched + stubbed_by_id + stubbed_by_reference + unparsed
    matched: int = 0
    stubbed_by_id: int = 0
    stubbed_by_reference: int = 0
    unparsed: int = 0
    examples: dict[str, list[str]] = field(default_factory=dict)

    def summary(self) -> str:
        lines = [
            f"{self.source}: {self.citations} citation(s): {self.matched} matched to works of the input, "
            f"{self.stubbed_by_id + self.stubbed_by_reference} stubbed ({self.stubbed_by_id} by id, "
            f"{self.stubbed_by_reference} by reference string), {self.unparsed} unparsed"
        ]
        for name, found in self.examples.items():
            if found:
                lines.append(f"  {name}: " + " | ".join(found))
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        return dict(vars(self))


def _text(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def _by_reference(key: str, work: dict[str, object]) -> bool:
    """Whether a stub is known by its reference string: a ``ref:`` key, or a key of the user's own (a JSON
    Lines file's) with the bibliography entry as its ``reference``; a stub keyed by a DOI, arXiv, OpenAlex, …
    id is known by that id."""
    kind = id_kind(key)
    return kind == "ref" or (kind == "own" and bool(_text(work.get("reference"))))


def citation_report(
    batch: GraphBatch, *, unresolved: int = 0, unresolved_examples: list[str] | None = None
) -> tuple[list[dict[str, object]], CitationCounts]:
    """One row per cited work of ``batch`` (the report's columns) and the counts of its citations.

    ``unresolved``: references the loader read but keyed to no work, so they are in no table (its report's
    count), added to ``unparsed`` with ``unresolved_examples``.
    """
    papers = batch.nodes.get("Paper", pd.DataFrame({"id": []}))
    by_id = {str(row["id"]): row for row in papers.to_dict("records")}
    cites = batch.rels.get(CITES, pd.DataFrame({SOURCE_COLUMN: [], TARGET_COLUMN: []}))
    rejected = [reject for reject in batch.rejects if reject.table == CITES]
    counts = CitationCounts(batch.source)
    examples: dict[str, list[str]] = {"matched": [], "stubbed by id": [], "stubbed by reference": [], "unparsed": []}
    per_work: Counter[str] = Counter()
    kinds: dict[str, str] = {}
    for citing, cited in zip(cites[SOURCE_COLUMN], cites[TARGET_COLUMN]):
        work = by_id.get(str(cited), {})
        if work.get("stub") is not True:
            kind, name = "record", "matched"
            counts.matched += 1
        elif _by_reference(str(cited), work):
            kind, name = "reference", "stubbed by reference"
            counts.stubbed_by_reference += 1
        else:
            kind, name = "id", "stubbed by id"
            counts.stubbed_by_id += 1
        per_work[str(cited)] += 1
        kinds[str(cited)] = kind
        if len(examples[name]) < EXAMPLES:
            shown = _text(work.get("reference")) or _text(work.get("label")) or _text(work.get("title"))
            examples[name].append(f"{citing} -> {cited}" + (f" ({shown})" if shown else ""))
    counts.unparsed = len(rejected) + unresolved
    examples["unparsed"] = [f"{r.origin}: {r.reason}" for r in rejected[:EXAMPLES]]
    examples["unparsed"] += list(unresolved_examples or [])[: EXAMPLES - len(examples["unparsed"])]
    if unresolved and not unresolved_examples:
        examples["unparsed"].append(f"{unresolved} reference(s) named no work (counted by the loader)")
    counts.citations = counts.matched + counts.stubbed_by_id + counts.stubbed_by_reference + counts.unparsed
    counts.examples = examples
    rows: list[dict[str, object]] = []
    for key, citations in sorted(per_work.items(), key=lambda item: (-item[1], item[0])):
        work = by_id.get(key, {})
        doi = _text(work.get("doi"))
        rows.append(
            {
                "work": key,
                "label": _text(work.get("label")) or _text(work.get("title")),
                "record": key if kinds[key] == "record" else "",
                "doi": f"doi:{doi}" if doi and not doi.startswith("doi:") else doi,
                "rules": kinds[key],
                "strings": _text(work.get("reference")),
                "citations": citations,
                "before": "",
                "keys_before": 0,
            }
        )
    return rows, counts


__all__ = ["EXAMPLES", "CitationCounts", "citation_report"]
