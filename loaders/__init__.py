"""Loaders: real sources -> canonical tables (:class:`graph.ingest.GraphBatch`); they parse, never write.

Each source is a :class:`Source` in :data:`SOURCES`, in the order ``citegraph ingest all`` loads
them. A loader is ``load(path) -> GraphBatch``: it turns one file or folder into node and
relationship tables with an ``_origin`` (``file:line``) on every row, and lists what it could not
even parse in :attr:`GraphBatch.rejects`; :func:`graph.ingest.ingest` validates and writes. A source
whose input can exceed memory (OpenAlex snapshots) also has ``chunks(path, n) -> Iterator[GraphBatch]``,
written by :func:`graph.ingest.ingest_stream`.

>>> from pathlib import Path
>>> [s.name for s in available(Path("../shared/data"))]   # doctest: +SKIP
['taxonomy', 'scisumm2018', 'scisummnet', 'anthology']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from graph.ingest import GraphBatch
from loaders import (
    anthology,
    cora,
    crossref,
    jsonl,
    openalex,
    opencitations,
    scisumm,
    scisummnet,
    scopus,
    semanticscholar,
    taxonomy,
    unarxive,
    wos,
)
from loaders.ids import PaperIdError, author_key, canonical_paper_id
from loaders.refmatch import Thesaurus
from loaders.toolkit import ANTHOLOGY_PAPERS, LoadContext


@dataclass(frozen=True)
class Source:
    name: str  # what the CLI calls it: `citegraph ingest <name> [PATH]`; also names the rejects report
    path: str  # default location relative to the data folder ($CITEGRAPH_DATA), a file or a folder
    load: Callable[[Path], GraphBatch]  # parses that path into canonical tables, writes nothing
    description: str  # one line for `citegraph ingest --help` and docs/data.md
    # True: part of `citegraph ingest all` (the bundled corpora). False: an importer of a user's
    # own export (OpenAlex, Web of Science, ...), loaded only when named with its PATH.
    bundled: bool = True
    # For sources too large for one batch in memory: the path read as batches of at most N records
    # (graph.ingest.ingest_stream writes them all or none); `citegraph ingest` uses it over `load`.
    chunks: Callable[[Path, int], Iterator[GraphBatch]] | None = None
    # For sources whose cited works are reference strings (loaders.refmatch matches them as works): the
    # path parsed with a thesaurus of forced joins and splits (`citegraph ingest SOURCE PATH --thesaurus FILE`)
    # and the load context.
    load_matched: Callable[[Path, Thesaurus | None, LoadContext], GraphBatch] | None = None
    # For sources that need more than their input (the data folder's Anthology titles): ``load`` with the load
    # context; ``read`` calls it in place of ``load``.
    load_in: Callable[[Path, LoadContext], GraphBatch] | None = None

    def read(self, path: Path, context: LoadContext | None = None, thesaurus: Thesaurus | None = None) -> GraphBatch:
        """The source's tables of ``path``, with ``context`` (the data folder of ``--data``, its title index)
        for the sources that use it and ``thesaurus`` for those that match reference strings; every caller that
        has a context (``citegraph ingest``) reads through here."""
        if thesaurus is not None and self.load_matched is not None:
            return self.load_matched(path, thesaurus, context or LoadContext())
        if self.load_in is not None:
            return self.load_in(path, context or LoadContext())
        return self.load(path)


SOURCES: dict[str, Source] = {
    source.name: source
    for source in (
        # Taxonomy first: it has no edges to papers yet, and later sources (IN_CATEGORY) will point at it.
        Source(
            "taxonomy",
            "taxonomy",
            taxonomy.load,
            "arXiv categories, ACM CCS 1998 and 2012 classes with BROADER, arXiv -> ACM 1998 MAPS_TO",
        ),
        # The SciSumm corpora before the Anthology: where both describe a paper, the Anthology's
        # clean metadata is written last (a non-null value overwrites; a null keeps the stored one).
        Source(
            "scisumm2018",
            "scisumm/Training-Set-2018",
            scisumm.load,
            "CL-SciSumm 2018: 40 reference papers, citing papers' full texts, citances and gold sentence links",
        ),
        Source(
            "scisummnet",
            "scisumm/ScisummNet-2019",
            scisummnet.load,
            "ScisummNet: 978 reference papers with abstract and summary, 13,701 citing sentences, authors, silver links",
        ),
        Source(
            "anthology",
            ANTHOLOGY_PAPERS,
            anthology.load,
            "ACL Anthology metadata: papers, authors and WROTE edges",
        ),
        Source(
            "unarxive",
            "unarxive/unarXive_data_sample_2022.tar.gz",
            lambda path: unarxive.load(path, title_index=LoadContext(path.parent.parent).title_index()),
            "unarXive full-text sample: arXiv papers, authors, categories, sentences, citations resolved by id, "
            "title or the fields of the entry",
            load_in=lambda path, context: unarxive.load(path, title_index=context.title_index()),
            load_matched=lambda path, thesaurus, context: unarxive.load(
                path, title_index=context.title_index(), thesaurus=thesaurus
            ),
        ),
        Source(
            "cora",
            "cora",
            cora.load,
            "CoRA citation graph without text: papers, citations, authors, 3-level topic hierarchy",
        ),
        # A user's own corpus last: its citations can point at papers loaded above, and its values win.
        Source(
            "jsonl",
            "jsonl/corpus.jsonl",
            jsonl.load,
            "your own corpus in the JSON Lines format of docs/data.md (papers, citations with contexts, sentences)",
        ),
        # Importers of a user's own exports: `citegraph ingest NAME PATH`, never part of `ingest all`. The
        # default paths are the real sample exports of the data folder (formats/, see its README.md).
        Source(
            "openalex",
            "formats/openalex",
            openalex.load,
            "OpenAlex works (snapshot JSONL partitions, API pages, single works): papers, aliases, authors, "
            "citations, topics",
            bundled=False,
            chunks=openalex.load_chunks,
        ),
        Source(
            "crossref",
            "formats/crossref",
            lambda path: crossref.load(path, extra_titles=LoadContext().anthology_titles),
            "Crossref works JSON (API responses, dumps, JSONL): papers, authors, references by DOI, by title or "
            "by their fields",
            bundled=False,
            load_in=lambda path, context: crossref.load(path, extra_titles=context.anthology_titles),
            load_matched=lambda path, thesaurus, context: crossref.load(
                path, extra_titles=context.anthology_titles, thesaurus=thesaurus
            ),
        ),
        Source(
            "opencitations",
            "formats/opencitations_coci",
            opencitations.load,
            "OpenCitations COCI/Index CSV or API JSON: citing -> cited DOIs as stub papers and citations",
            bundled=False,
        ),
        Source(
            "semanticscholar",
            "formats/semanticscholar",
            semanticscholar.load,
            "Semantic Scholar Graph API responses and S2AG datasets (papers, abstracts, citations with "
            "intents, influence and contexts)",
            bundled=False,
        ),
        Source(
            "wos",
            "formats/wos",
            wos.load,
            "Web of Science export (plain text, tab-delimited or BibTeX): records, authors, cited references as CITES",
            bundled=False,
            load_matched=lambda path, thesaurus, context: wos.load_with_report(path, thesaurus=thesaurus)[0],
        ),
        Source(
            "scopus",
            "formats/scopus",
            scopus.load,
            "Scopus CSV export: records, authors, references as CITES",
            bundled=False,
            load_matched=lambda path, thesaurus, context: scopus.load_with_report(path, thesaurus=thesaurus)[0],
        ),
    )
}


def available(data_dir: Path) -> list[Source]:
    """The sources whose default path exists under ``data_dir``, in ingest order."""
    return [source for source in SOURCES.values() if (Path(data_dir) / source.path).exists()]


__all__ = ["SOURCES", "LoadContext", "PaperIdError", "Source", "author_key", "available", "canonical_paper_id"]
