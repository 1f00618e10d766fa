"""CL-SciSumm 2018 training set (``scisumm/Training-Set-2018``) -> papers, sentences, citances, gold links.

One folder per reference paper (RP)::

    <RP>/Reference_XML/<RP>.xml          the RP's full text, one <S sid=..> per sentence
    <RP>/Citance_XML/<citing>.xml        full texts of papers that cite the RP
    <RP>/annotation/<RP>.ann.txt         gold citances: citing sentences -> RP sentences (.annv3.txt in some)

becomes

* ``Paper {id, title, year, dataset="scisumm2018", stub=false}`` for each RP and each citing paper.
  ``id`` is the canonical ACL id of the file name (``Q13-1024-parscit130908.xml`` -> ``Q13-1024``);
  citing papers outside the Anthology (``P22324_w09.xml``, ``ICDAR99.xml``) get the local id
  ``scisumm2018:<RP>/<file stem>``, as such names only mean something inside their RP's folder.
  ``title`` is the text of ``sid=0`` when the file has one; ``year`` comes from the ACL id
  (:func:`loaders.sentences.acl_year`);
* ``Sentence {id, paper_id, sid, section, text}`` + ``HAS_SENTENCE`` for every recovered ``<S>``
  (:func:`loaders.sentences.parse_sentence_xml`). RP sentences are ``<RP>#<sid>``; citing papers'
  sentences are ``<citing>#<RP>:<sid>`` (:func:`loaders.sentences.citing_sentence_id`), because
  the same citing paper comes with *different* sentence splits in two RP folders (``I08-4030``,
  ``P05-1021``, ``W03-1728``) and, for 57 papers, as a ScisummNet RP with its own ``<id>#<sid>``;
* ``(citing)-[:CITES {n_contexts, dataset}]->(RP)`` for every citing file (``n_contexts``: distinct
  annotated citances, null when none was annotated);
* ``(citing Sentence)-[:MENTIONS {marker}]->(RP)`` for every sentence of a citance's
  ``Citation Offset`` (a citance may span several sentences; each gets the mention), ``marker``
  the ``Citation Marker``; one edge per pair, the first marker wins;
* ``(citing Sentence)-[:LINKS_TO {method="gold", annotator, score=1.0}]->(RP Sentence)`` from every
  sentence of the ``Citation Offset`` to every sentence of the ``Reference Offset``. Annotator is
  part of the edge identity: two annotators linking the same pair give two edges, one annotator
  twice gives one. A missing ``Annotator`` is null.

Annotation quirks handled (see :func:`loaders.sentences.parse_annotation_line`): offsets without
brackets or quotes (``'17'``, ``['58', '59' 60']``), ``Citing Article`` given as ``X.txt``, without
extension, in another case or with ``-`` for ``_`` (``PS15684-W09`` for ``PS15684_w09.xml``), or
without the ``-parscit`` suffix of its file; the ``Citation Number`` misspelling; a trailing ``|``.

Rejected, with ``<RP>/<folder>/<file>:<line>`` and a reason: an ``<S>`` that cannot be recovered
(table ``Sentence``); an annotation line that is not a record, names no citing file that exists,
or has no usable offsets (``LINKS_TO``); a ``Citation Offset`` sentence the citing XML lacks
(``MENTIONS``, its links go with it); a ``Reference Offset`` sentence the RP XML lacks
(``LINKS_TO``). An ``<S>`` with no text is no sentence (counted, not rejected); a link to one is
rejected as above. Files in ``Citance_XML`` that are not XML (``J13-1007word.docx.txt``: raw text
exports) are skipped and counted.

Also here: the shared task's run format (:func:`read_task1a_csv`, :func:`write_task1a_csv`).
"""

from __future__ import annotations

import csv
import logging
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from graph.errors import IngestError, Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from loaders._common import nullable_ints, table
from loaders.sentences import (
    ParsedXml,
    acl_id_or_none,
    acl_year,
    citing_sentence_id,
    decode_lenient,
    parse_annotation_line,
    parse_offsets,
    parse_sentence_xml,
    sentence_id,
)

log = logging.getLogger(__name__)

SOURCE = "scisumm2018"
DATASET = "scisumm2018"  # Paper.dataset and CITES.dataset
LOCAL_PREFIX = "scisumm2018:"  # ids of citing papers that have no ACL id: scisumm2018:<RP>/<file stem>
GOLD = "gold"  # LINKS_TO.method
GOLD_SCORE = 1.0  # LINKS_TO.score of a human link

TASK1A_COLUMNS = (
    "Citance Number",
    "Reference Article",
    "Citing Article",
    "Citation Marker Offset",
    "Citation Marker",
    "Citation Offset",
    "Citation Text",
    "Citation Text Clean",
    "Reference Offset",
    "Reference Text",
    "Discourse Facet",
)


@dataclass
class _Text:
    """One parsed full text and where it came from."""

    paper_id: str
    where: str  # path relative to the dataset root, for origins
    parsed: ParsedXml
    ids: dict[int, str]  # sid -> Sentence.id


@dataclass
class _Tables:
    """Column lists of every output table, appended to as the folders are read."""

    papers: dict[str, dict[str, object]] = field(default_factory=dict)  # id -> row (first wins; RP rows first)
    sentences: dict[str, list[object]] = field(
        default_factory=lambda: {k: [] for k in ("id", "paper_id", "sid", "section", "text", ORIGIN_COLUMN)}
    )
    has_sentence: dict[str, list[object]] = field(default_factory=lambda: _edge_columns())
    cites: dict[tuple[str, str], tuple[set[frozenset[int]], str]] = field(default_factory=dict)
    mentions: dict[tuple[str, str], tuple[str | None, str]] = field(default_factory=dict)  # -> (marker, origin)
    links: dict[tuple[str, str, str | None], str] = field(default_factory=dict)  # (src, tgt, annotator) -> origin
    rejects: list[Reject] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


def _edge_columns(*extra: str) -> dict[str, list[object]]:
    return {k: [] for k in (SOURCE_COLUMN, TARGET_COLUMN, *extra, ORIGIN_COLUMN)}


def _file_key(name: str) -> str:
    """How annotation lines and file names are matched: no extension or -parscit suffix, any case, _ as -."""
    stem = re.sub(r"\.(xml|txt)$", "", name.strip(), flags=re.I)
    stem = re.sub(r"-parscit\d*$", "", stem, flags=re.I)
    return stem.lower().replace("_", "-")


def load(path: Path) -> GraphBatch:
    """Parse the Training-Set-2018 folder into a :class:`GraphBatch`; see the module docstring."""
    root = Path(path)
    if not root.is_dir():
        raise IngestError(
            f"{SOURCE}: {root} is not a folder; pass scisumm/Training-Set-2018 or set CITEGRAPH_DATA "
            "to the data folder (see ../shared/data/README.md)"
        )
    started = time.perf_counter()
    out = _Tables()
    folders = sorted(p for p in root.iterdir() if p.is_dir())
    for folder in tqdm(folders, desc=root.name, unit=" RPs", disable=None, leave=False):
        _load_folder(folder, out)
    batch = _batch(out)
    counts = out.counts
    log.info(
        "%s: %d RPs, %d citing papers, %d sentences, %d annotation lines, %d MENTIONS, %d gold LINKS_TO, "
        "%d rejects, %d empty <S> dropped, %d files with non-UTF-8 bytes, %d non-XML files skipped (%.1fs)",
        root.name,
        counts["rp"],
        counts["citing"],
        len(batch.nodes["Sentence"]),
        counts["annotations"],
        len(batch.rels["MENTIONS"]),
        len(batch.rels["LINKS_TO"]),
        len(out.rejects),
        counts["empty"],
        counts["non_utf8_files"],
        counts["skipped_files"],
        time.perf_counter() - started,
    )
    return batch


def _load_folder(folder: Path, out: _Tables) -> None:
    rp_id = acl_id_or_none(folder.name)
    if rp_id is None:
        out.rejects.append(
            Reject("Paper", f"{folder.name}/", f"folder {folder.name!r} is not named by an ACL id; it is skipped")
        )
        return
    reference = _reference_file(folder)
    if reference is None:
        out.rejects.append(
            Reject("Paper", f"{folder.name}/Reference_XML", f"no {folder.name}.xml in Reference_XML; the RP is skipped")
        )
        return
    rp = _read_text(reference, rp_id, folder.parent, out, partial(sentence_id, rp_id))
    _add_paper(out, rp, front=True)
    out.counts["rp"] += 1

    citing: dict[str, _Text] = {}  # _file_key -> text
    citance_dir = folder / "Citance_XML"
    for file in sorted(citance_dir.iterdir()) if citance_dir.is_dir() else []:
        if file.suffix.lower() != ".xml":
            out.counts["skipped_files"] += 1
            continue
        citing_id = acl_id_or_none(file.stem) or f"{LOCAL_PREFIX}{rp_id}/{file.stem}"
        key = _file_key(file.name)
        if key in citing:
            where = f"{folder.name}/Citance_XML/{file.name}:1"
            out.rejects.append(
                Reject("Paper", where, f"{file.name} names the same citing paper as {citing[key].where}; skipped")
            )
            continue
        text = _read_text(file, citing_id, folder.parent, out, partial(citing_sentence_id, citing_id, rp_id))
        citing[key] = text
        if citing_id != file.stem:
            citing.setdefault(_file_key(citing_id), text)
        _add_paper(out, text, front=False)
        out.cites.setdefault((citing_id, rp_id), (set(), f"{text.where}:1"))

    annotation_dir = folder / "annotation"
    for file in sorted(annotation_dir.glob("*.txt")) if annotation_dir.is_dir() else []:
        _read_annotations(file, folder, rp, citing, out)


def _reference_file(folder: Path) -> Path | None:
    expected = folder / "Reference_XML" / f"{folder.name}.xml"
    if expected.is_file():
        return expected
    found = sorted((folder / "Reference_XML").glob("*.xml")) if (folder / "Reference_XML").is_dir() else []
    return found[0] if len(found) == 1 else None


def _read_text(file: Path, paper_id: str, root: Path, out: _Tables, make_id: Callable[[int], str]) -> _Text:
    where = file.relative_to(root).as_posix()
    parsed = parse_sentence_xml(file.read_bytes())
    ids = {s.sid: make_id(s.sid) for s in parsed.sentences}
    cols = out.sentences
    for sentence in parsed.sentences:
        sid_key = ids[sentence.sid]
        origin = f"{where}:{sentence.line}"
        cols["id"].append(sid_key)
        cols["paper_id"].append(paper_id)
        cols["sid"].append(sentence.sid)
        cols["section"].append(sentence.section)
        cols["text"].append(sentence.text)
        cols[ORIGIN_COLUMN].append(origin)
        out.has_sentence[SOURCE_COLUMN].append(paper_id)
        out.has_sentence[TARGET_COLUMN].append(sid_key)
        out.has_sentence[ORIGIN_COLUMN].append(origin)
    for bad in parsed.unrecovered:
        out.rejects.append(Reject("Sentence", f"{where}:{bad.line}", bad.reason))
    out.counts["empty"] += len(parsed.empty_sids)
    out.counts["non_utf8_files"] += parsed.non_utf8_bytes > 0
    out.counts["non_utf8_bytes"] += parsed.non_utf8_bytes
    return _Text(paper_id, where, parsed, ids)


def _add_paper(out: _Tables, text: _Text, *, front: bool) -> None:
    """One Paper row per id: an RP's own row wins over a citing paper's; else the first file with a title."""
    known = out.papers.get(text.paper_id)
    if known is None or (front and not known["_rp"]):
        if known is None and not front:
            out.counts["citing"] += 1
        out.papers[text.paper_id] = {
            "id": text.paper_id,
            "title": text.parsed.title if text.parsed.title is not None or known is None else known["title"],
            "year": acl_year(text.paper_id),
            "dataset": DATASET,
            "stub": False,
            ORIGIN_COLUMN: f"{text.where}:1",
            "_rp": front,
        }
    elif known["title"] is None:
        known["title"] = text.parsed.title


def _read_annotations(file: Path, folder: Path, rp: _Text, citing: dict[str, _Text], out: _Tables) -> None:
    where_file = file.relative_to(folder.parent).as_posix()
    text, _ = decode_lenient(file.read_bytes())
    rp_key = _file_key(folder.name)
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{where_file}:{number}"

        def reject(table_name: str, reason: str, where: str = where) -> None:
            out.rejects.append(Reject(table_name, where, reason))

        fields = parse_annotation_line(line)
        if "Citing Article" not in fields:
            reject("LINKS_TO", f"not an annotation record (no `Citing Article:`): {_preview(line)}")
            continue
        out.counts["annotations"] += 1
        reference = fields.get("Reference Article", "")
        if reference and _file_key(reference) != rp_key:
            reject("LINKS_TO", f"`Reference Article` {reference!r} is not this folder's RP {folder.name}")
            continue
        source = citing.get(_file_key(fields["Citing Article"]))
        if source is None:
            reject(
                "LINKS_TO",
                f"`Citing Article` {fields['Citing Article']!r} has no file in {folder.name}/Citance_XML",
            )
            continue
        citation_sids = parse_offsets(fields.get("Citation Offset", ""))
        reference_sids = parse_offsets(fields.get("Reference Offset", ""))
        if not citation_sids or not reference_sids:
            name = "Citation Offset" if not citation_sids else "Reference Offset"
            reject("LINKS_TO", f"`{name}` {fields.get(name, '')!r} names no sentence id")
            continue
        targets = []
        for sid in reference_sids:
            if sid in rp.ids:
                targets.append(rp.ids[sid])
            else:
                reject("LINKS_TO", f"`Reference Offset` names {_missing(rp, sid)}; its links are dropped")
        annotator = fields.get("Annotator") or None
        marker = fields.get("Citation Marker") or None
        found = []
        for sid in citation_sids:
            if sid not in source.ids:
                reject(
                    "MENTIONS", f"`Citation Offset` names {_missing(source, sid)}; its mention and links are dropped"
                )
                continue
            found.append(sid)
            sentence = source.ids[sid]
            out.mentions.setdefault((sentence, rp.paper_id), (marker, where))
            for target in targets:
                out.links.setdefault((sentence, target, annotator), where)
        if found:
            out.cites[(source.paper_id, rp.paper_id)][0].add(frozenset(found))


def _missing(text: _Text, sid: int) -> str:
    file = text.where
    if sid in text.parsed.empty_sids:
        return f"sentence {sid}, which is empty in {file} (line {text.parsed.empty_sids[sid]})"
    return f"sentence {sid}, which {file} does not have"


def _preview(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def _batch(out: _Tables) -> GraphBatch:
    papers = sorted(out.papers.values(), key=lambda row: not row["_rp"])  # RPs first, then citing papers
    paper_table = table(
        {
            "id": [r["id"] for r in papers],
            "title": [r["title"] for r in papers],
            "year": nullable_ints([r["year"] for r in papers]),
            "dataset": [r["dataset"] for r in papers],
            "stub": [r["stub"] for r in papers],
            ORIGIN_COLUMN: [r[ORIGIN_COLUMN] for r in papers],
        }
    )
    sentences = table({**out.sentences, "sid": nullable_ints(out.sentences["sid"])})
    cites = table(
        {
            SOURCE_COLUMN: [s for s, _ in out.cites],
            TARGET_COLUMN: [t for _, t in out.cites],
            "n_contexts": nullable_ints([len(c) or None for c, _ in out.cites.values()]),
            "dataset": [DATASET] * len(out.cites),
            ORIGIN_COLUMN: [w for _, w in out.cites.values()],
        }
    )
    mentions = table(
        {
            SOURCE_COLUMN: [s for s, _ in out.mentions],
            TARGET_COLUMN: [t for _, t in out.mentions],
            "marker": [m for m, _ in out.mentions.values()],
            ORIGIN_COLUMN: [w for _, w in out.mentions.values()],
        }
    )
    links = table(
        {
            SOURCE_COLUMN: [s for s, _, _ in out.links],
            TARGET_COLUMN: [t for _, t, _ in out.links],
            "method": [GOLD] * len(out.links),
            "annotator": [a for _, _, a in out.links],
            "score": [GOLD_SCORE] * len(out.links),
            ORIGIN_COLUMN: list(out.links.values()),
        }
    )
    return GraphBatch(
        SOURCE,
        nodes={"Paper": paper_table, "Sentence": sentences},
        rels={
            "HAS_SENTENCE": table(out.has_sentence),
            "CITES": cites,
            "MENTIONS": mentions,
            "LINKS_TO": links,
        },
        rejects=out.rejects,
    )


# ---------------------------------------------------------------------------------------------
# The shared task's run format


def read_task1a_csv(path: Path) -> pd.DataFrame:
    """A Task 1A run file (one per RP) as a frame of strings with the columns of :data:`TASK1A_COLUMNS`.

    Empty cells are ``""`` (an input file has ``Reference Offset`` and ``Reference Text`` empty);
    offsets stay as written (``'90','91'``): :func:`loaders.sentences.parse_offsets` reads them.
    A file without one of the columns is an :class:`IngestError`; extra columns are dropped.
    """
    path = Path(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    except (UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise IngestError(f"{path}: not a readable Task 1A CSV ({exc}); expected UTF-8 CSV with a header") from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    missing = [c for c in TASK1A_COLUMNS if c not in frame.columns]
    if missing:
        raise IngestError(
            f"{path}: not a Task 1A run file, missing column(s) {', '.join(missing)}; "
            f"the header must be: {','.join(TASK1A_COLUMNS)}"
        )
    return frame[list(TASK1A_COLUMNS)].reset_index(drop=True)


def write_task1a_csv(frame: pd.DataFrame, path: Path) -> None:
    """Write ``frame`` as a Task 1A run file: the :data:`TASK1A_COLUMNS` in order, nulls as empty cells."""
    missing = [c for c in TASK1A_COLUMNS if c not in frame.columns]
    if missing:
        raise IngestError(f"cannot write {path}: the frame lacks column(s) {', '.join(missing)}")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    frame[list(TASK1A_COLUMNS)].to_csv(path, index=False, encoding="utf-8", na_rep="", quoting=csv.QUOTE_MINIMAL)


__all__ = [
    "DATASET",
    "GOLD",
    "LOCAL_PREFIX",
    "SOURCE",
    "TASK1A_COLUMNS",
    "load",
    "read_task1a_csv",
    "write_task1a_csv",
]
