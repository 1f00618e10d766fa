r"""Citing sentences as queries: the cited paper's marker masked, and the query sets built from them.

A citing sentence names the paper it cites ("as Smith (1999) did", "{{cite:…}}"); a query built
from it must not, or retrieval would match the name instead of the content. :func:`mask_citance`
replaces the marker with ``[CIT]``, trying every spelling of the cited authors
(:func:`author_lists`). Three query sets are built from the masked sentences:

* :func:`citing_sentences` / :func:`profile_citances`: every MENTIONS sentence, masked per cited paper —
  the citation-context profiles of :class:`gnn.retrieval.profiles.ProfileIndex`
  (:func:`cached_profile_citances` keeps them beside the index);
* :func:`build_queries`: every ScisummNet citing sentence (ids ``<citing>#c<hash>``) with the marker of
  *every* paper it cites masked, all of them its targets — the queries of ``citegraph eval recommend``
  and ``citegraph train reranker`` on the shared data (``--queries scisummnet``);
* :func:`store_queries`: the same for every MENTIONS sentence of the store, whichever source loaded
  it (``--queries store``: any corpus with citation contexts; split by :mod:`gnn.recommend.split`);
* :func:`manuscript_citances`: CL-SciSumm 2018's gold citances, runs of consecutive sentences citing one
  reference paper — the manuscript-mode table of the evaluation.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from graph.errors import DataError
from graph.files import StoreFiles, write_atomic
from graph.store import GraphStore
from loaders.markers import MASK, mask_target, surname

SCISUMMNET_SENTENCE = re.compile(r"#c[0-9a-f]{12}$")
SCISUMM2018_SENTENCE = re.compile(r"#(?P<rp>[^#]+):(?P<sid>\d+)$")

_PLACEHOLDER = re.compile(r"\{\{(?:cite|formula):[^}]*\}\}")


def mask_citance(
    text: str,
    marker: str | None,
    author_names: Sequence[str],
    year: int | None,
    *,
    spellings: Sequence[Sequence[str]] = (),
) -> tuple[str, str]:
    """``text`` with the cited paper's marker masked as ``[CIT]``, and how (see :mod:`loaders.markers`).

    In order: the author–year marker of the paper (:func:`loaders.markers.mask_target`, when its
    authors and year are known; ``author_names`` first, then each other spelling of the same
    authors in ``spellings``, see :func:`author_lists`); the MENTIONS ``marker`` where it occurs
    verbatim (CL-SciSumm's annotated markers, unarXive's ``{{cite:…}}`` placeholders); failing both,
    every occurrence of the first author's surname (in every spelling) and of the year is replaced
    ("scrubbed"), so a query never names its target. Remaining unarXive placeholders become
    ``[CIT]`` (citations) or nothing (formulas). Returns ``(masked text, how)`` with ``how`` in
    marker, first_author, near_name, loose, marker_text, scrubbed, none (nothing known to mask by).
    """
    how = "none"
    surname_lists = [[surname(n) for n in names if n.strip()] for names in (author_names, *spellings)]
    surname_lists = [surnames for surnames in surname_lists if surnames]
    result = None
    if year is not None:
        for surnames in surname_lists:
            result = mask_target(text, surnames, year)
            if result.ok:
                break
    if result is not None and result.ok:
        text, how = result.text, result.how
    elif marker and len(marker) > 3 and marker in text:
        text, how = text.replace(marker, MASK), "marker_text"
    elif surname_lists and year is not None:
        scrubbed = text
        for first in dict.fromkeys(surnames[0] for surnames in surname_lists):
            scrubbed = re.sub(rf"\b{re.escape(first)}\b", MASK, scrubbed, flags=re.IGNORECASE)
        scrubbed = re.sub(rf"\b{year}[a-z]?\b", MASK, scrubbed)
        text, how = scrubbed, "scrubbed"
    text = re.sub(r"\{\{cite:[^}]*\}\}", MASK, text)
    return _PLACEHOLDER.sub("", text).strip(), how


MAX_AUTHOR_SPELLINGS = 4  # author lists per paper at most (combinations of spellings of its first two authors)


def author_lists(store: GraphStore, paper_ids: Iterable[str]) -> dict[str, list[list[str]]]:
    """Each paper's author names in order, as one list per spelling of its first two authors.

    Two sources can hold one author under two spellings at the same position (W00-1308 has
    "Kristina Toutanova" and "Kristina Toutanvoa" both first): every combination of the spellings
    at positions 1 and 2 — the names an author–year marker shows — is one list (at most
    :data:`MAX_AUTHOR_SPELLINGS`), later positions take their first spelling, and spellings come by
    author id, so every run masks a sentence the same way. ``mask_citance(text, marker, lists[0],
    year, spellings=lists[1:])`` tries them all.
    """
    by_position: dict[str, dict[int, list[str]]] = {}
    ids = sorted(set(paper_ids))
    for begin in range(0, len(ids), 5_000):
        for row in store.query("authors_of_papers", {"ids": ids[begin : begin + 5_000]}):
            slots = by_position.setdefault(row["paper_id"], {})
            position = row["position"] if row["position"] is not None else 1_000_000 + len(slots)
            slots.setdefault(int(position), []).append(row["name"] or "")
    lists: dict[str, list[list[str]]] = {}
    for paper, slots in by_position.items():
        spelled = [slots[p] for p in sorted(slots)]
        rest = [names[0] for names in spelled[2:]]
        heads = itertools.islice(itertools.product(*spelled[:2]), MAX_AUTHOR_SPELLINGS)
        lists[paper] = [[*head, *rest] for head in heads]
    return lists


def citing_sentences(store: GraphStore) -> pd.DataFrame:
    """Every MENTIONS citing sentence with the cited paper's marker masked.

    Columns: sentence_id, citing_id, citing_year, cited_id, cited_year, text (raw), masked, how.
    A sentence citing several papers appears once per cited paper, each time with that paper masked.
    """
    rows = _citance_rows(store)
    authors = author_lists(store, rows["cited_id"])
    masked, hows = [], []
    for text, marker, cited_id, year in zip(rows["text"], rows["marker"], rows["cited_id"], rows["cited_year"]):
        first, *others = authors.get(cited_id, [[]])
        out, how = mask_citance(
            str(text or ""),
            marker if isinstance(marker, str) else None,
            first,
            None if pd.isna(year) else int(year),
            spellings=others,
        )
        masked.append(out)
        hows.append(how)
    rows["masked"] = masked
    rows["how"] = hows
    return rows.drop(columns=["marker"])


def profile_citances(store: GraphStore) -> pd.DataFrame:
    """Every MENTIONS sentence, masked per cited paper, as :class:`ProfileIndex` wants it."""
    return citing_sentences(store).rename(columns={"text": "raw"}).rename(columns={"masked": "text"})


def cached_profile_citances(store: GraphStore, path: Path, *, save: bool = True) -> pd.DataFrame:
    """:func:`profile_citances`, kept in ``path`` while the store's files are unchanged (``save=False``:
    read from ``path`` when current, never written)."""
    stamp = StoreFiles.of(store).stamp()
    stamp_path = path.with_suffix(".stamp")
    if (
        stamp is not None
        and path.is_file()
        and stamp_path.is_file()
        and stamp_path.read_text(encoding="utf-8") == stamp
    ):
        return pd.read_parquet(path)
    frame = profile_citances(store)
    if stamp is not None and save:
        path.parent.mkdir(parents=True, exist_ok=True)
        # the frame first, then its stamp, each renamed into place: a kill never pairs a torn or older
        # frame with the store's current stamp
        tmp = path.with_name(path.name + ".tmp")
        frame.to_parquet(tmp, index=False)
        tmp.replace(path)
        write_atomic(stamp_path, stamp)
    return frame


def _citance_rows(store: GraphStore) -> pd.DataFrame:
    """Every MENTIONS edge with its sentence, citing and cited paper (``cypher/retrieval_citances.cypher``)."""
    return pd.DataFrame(
        store.query("retrieval_citances"),
        columns=["sentence_id", "text", "citing_id", "citing_year", "cited_id", "cited_year", "marker"],
    )


def build_queries(store: GraphStore) -> pd.DataFrame:
    """One row per ScisummNet citing sentence, every cited paper's marker masked (module docstring)."""
    rows = _citance_rows(store)
    return _queries(store, rows[rows["sentence_id"].str.contains(SCISUMMNET_SENTENCE)])


def store_queries(store: GraphStore) -> pd.DataFrame:
    """One row per citing sentence of the store — every MENTIONS sentence, whatever loaded it — masked
    as :func:`build_queries` masks; ``citing_year`` is None where the citing paper has no year."""
    return _queries(store, _citance_rows(store))


QUERY_SOURCES = {"scisummnet": build_queries, "store": store_queries}  # --queries of train/eval


def default_query_source(store: GraphStore) -> str:
    """``scisummnet`` when the store holds ScisummNet citing sentences (the shared data), else ``store``."""
    ids = _citance_rows(store)["sentence_id"].astype(str)
    return "scisummnet" if ids.str.contains(SCISUMMNET_SENTENCE).any() else "store"


def query_frame(store: GraphStore, source: str) -> pd.DataFrame:
    """The queries of ``source`` (:data:`QUERY_SOURCES`); a DataError when there are none."""
    frame = QUERY_SOURCES[source](store)
    if frame.empty:
        what = "ScisummNet citing sentences (ids <citing>#c<hash>)" if source == "scisummnet" else "citing sentences"
        raise DataError(
            f"the store has no {what} with a MENTIONS edge to the paper they cite: nothing to train or evaluate on; "
            "load a corpus with citation contexts (unarXive, JSONL sentences that cite, Semantic Scholar contexts)"
            + (" or pass --queries store" if source == "scisummnet" else "")
        )
    return frame


QUERY_COLUMNS = ["sentence_id", "citing_id", "citing_year", "context", "raw", "targets", "how", "cited_elsewhere"]


def _queries(store: GraphStore, rows: pd.DataFrame) -> pd.DataFrame:
    """One query per sentence of ``rows``: its text with the marker of every paper it cites masked, those
    papers its targets, and what its citing paper cites elsewhere."""
    if rows.empty:
        return pd.DataFrame(columns=QUERY_COLUMNS)
    authors = author_lists(store, rows["cited_id"])
    out = []
    for sentence_id, group in rows.groupby("sentence_id", sort=True):
        text = str(group["text"].iat[0])
        hows = []
        for cited_id, year, marker in zip(group["cited_id"], group["cited_year"], group["marker"]):
            first, *others = authors.get(cited_id, [[]])
            text, how = mask_citance(
                text,
                marker if isinstance(marker, str) else None,
                first,
                None if pd.isna(year) else int(year),
                spellings=others,
            )
            hows.append(how)
        citing_year = group["citing_year"].iat[0]
        out.append(
            {
                "sentence_id": sentence_id,
                "citing_id": group["citing_id"].iat[0],
                "citing_year": None if pd.isna(citing_year) else int(citing_year),
                "context": text,
                "raw": str(group["text"].iat[0]),
                "targets": tuple(sorted(set(group["cited_id"]))),
                "how": ",".join(hows),
            }
        )
    frame = pd.DataFrame(out)
    # what the citing paper cites elsewhere (its other CITES): "papers already cited"
    cites = pd.DataFrame(store.query("cited_papers", {"ids": sorted(set(frame["citing_id"]))}))
    by_paper = cites.groupby("paper_id")["cited_id"].apply(list).to_dict() if len(cites) else {}
    frame["cited_elsewhere"] = [
        tuple(sorted(set(by_paper.get(c, [])) - set(t))) for c, t in zip(frame["citing_id"], frame["targets"])
    ]
    return frame


def manuscript_citances(store: GraphStore) -> pd.DataFrame:
    """CL-SciSumm 2018's gold citances from the graph: runs of consecutive MENTIONS sentences.

    The loader turns each annotation record into MENTIONS edges from its citing sentences
    (``<citing>#<RP>:<sid>``) to the reference paper; a run of consecutive sentences of one citing
    paper citing one RP is one citance (750 annotation records give 740 runs: a few records
    annotate the same sentences). Columns: citing_id, citing_year, rp, sids (tuple).
    """
    rows = _citance_rows(store)
    parts = rows["sentence_id"].str.extract(SCISUMM2018_SENTENCE)
    rows = rows[parts["sid"].notna()].assign(sid=parts["sid"].dropna().astype(int))
    out = []
    for (citing, rp), group in rows.groupby(["citing_id", "cited_id"], sort=True):
        sids = sorted(set(group["sid"]))
        run = [sids[0]]
        for sid in [*sids[1:], None]:
            if sid is not None and sid == run[-1] + 1:
                run.append(sid)
                continue
            year = group["citing_year"].iat[0]
            out.append(
                {"citing_id": citing, "citing_year": None if pd.isna(year) else int(year), "rp": rp, "sids": tuple(run)}
            )
            if sid is not None:
                run = [sid]
    return pd.DataFrame(out, columns=["citing_id", "citing_year", "rp", "sids"])


__all__ = [
    "MAX_AUTHOR_SPELLINGS",
    "QUERY_COLUMNS",
    "QUERY_SOURCES",
    "SCISUMM2018_SENTENCE",
    "SCISUMMNET_SENTENCE",
    "author_lists",
    "build_queries",
    "cached_profile_citances",
    "citing_sentences",
    "default_query_source",
    "manuscript_citances",
    "mask_citance",
    "profile_citances",
    "query_frame",
    "store_queries",
]
