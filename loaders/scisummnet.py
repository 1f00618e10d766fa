"""ScisummNet 2019 (``scisumm/ScisummNet-2019``) -> reference papers, citing sentences, silver links.

One folder per reference paper (RP)::

    <RP>/Reference_XML/<RP>.xml                 the RP's full text, one <S sid=..> per sentence
    <RP>/summary/<RP>.abstract.txt              its abstract, one sentence per line
    <RP>/summary/<RP>.scisummnet_human.txt      title line, then the human summary, one sentence per line
    <RP>/citing_sentences.json                  [{citance_No, citing_paper_id, citing_paper_authority,
                                                  citing_paper_authors, raw_text, clean_text, keep_for_gold}]
    <RP>/annotation/<RP>.ann.txt                automatic links: Citance Number -> Reference Offset

becomes

* RP ``Paper {id, title, abstract, summary, year, dataset="scisummnet", stub=false}``: ``title`` is
  the text of ``sid=0``, else the first line of the human summary (5 RPs have an empty ``sid=0``);
  ``abstract`` and ``summary`` keep one sentence per line (the summary without its title line);
  ``year`` from the ACL id (:func:`loaders.sentences.acl_year`);
* the RP's ``Sentence {id="<RP>#<sid>", paper_id, sid, section, text}`` + ``HAS_SENTENCE``;
* citing papers as ``Paper {id, year, stub=false}`` only: no title and no ``dataset``, so that the
  Anthology loader, which owns their metadata under the same id, is never overwritten by nulls
  or by this loader's name;
* each citing sentence as ``Sentence {id="<citing>#c<12 hex>", paper_id=<citing>, text}`` (no
  ``sid``, no ``section``: the sentence comes without its paper's full text). The hex is a hash
  of the whitespace-normalised text (:func:`loaders.sentences.citance_id`), so the same sentence
  listed under two RPs (612 of them do) is one node with a ``MENTIONS`` edge to each;
  ``citance_No`` numbers sentences per RP only and cannot key them. ``text`` is ``raw_text``
  (entities unescaped) by default, which still holds the citation marker, e.g. ``TnT (Brants, 2000)``;
  ``load(path, text_field="clean_text")`` takes the cleaned text instead (hyphenation repaired,
  leading table debris cut; it ends with a period the raw text lacks);
* ``(citing)-[:CITES {n_contexts, dataset="scisummnet"}]->(RP)``, ``n_contexts`` the number of
  distinct citing sentences; ``(citing Sentence)-[:MENTIONS]->(RP)`` (no ``marker``: the data has none);
* ``Author {id, name}`` + ``(Author)-[:WROTE {position}]->(citing)`` from ``citing_paper_authors``.
  The README describes that field as ``Last, First``, but the data is ``First, Last``
  (``David, Martinez | Eneko, Agirre``; checked against the Anthology's author lists: 11,913 names
  match as First-Last, 24 as Last-First), so ``name`` is ``"<First> <Last>"`` with entities
  unescaped, and ``id`` is :func:`loaders.ids.author_key` of it, as in the Anthology loader.
  ``position`` is 1-based;
* ``(citing Sentence)-[:LINKS_TO {method="silver", annotator}]->(RP Sentence)`` from the
  annotation lines (``Annotator: Automatic``; no score in the data). Silver: for training only.

Not loaded (no place in the data model): ``citing_paper_authority``, ``keep_for_gold``.

Rejected, with ``<RP>/<file>:<line>`` and a reason: an ``<S>`` that cannot be recovered
(``Sentence``); a ``citing_sentences.json`` that is not JSON or not a list (``Sentence``, the RP
is kept without citances); an entry without ``citing_paper_id``/``raw_text``, or whose id is not
a paper id (``Sentence``); an entry whose citing paper is the RP itself (``MENTIONS``: ``D07-1104``
lists sentences of its own that cite another Lopez 2007 paper); an author entry with no letter
(``Author``); an annotation line that is not a record, names a ``Citance Number`` the JSON lacks
or rejected, or a ``Reference Offset`` sentence the XML lacks or has empty (``LINKS_TO``). A
missing summary or abstract file leaves the field null.
"""

from __future__ import annotations

import html
import json
import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tqdm import tqdm

from graph.errors import IngestError, Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from loaders._common import nullable_ints, table
from loaders.ids import PaperIdError, author_key, canonical_paper_id
from loaders.sentences import (
    ParsedXml,
    acl_id_or_none,
    acl_year,
    citance_id,
    clean_text,
    decode_lenient,
    parse_annotation_line,
    parse_offsets,
    parse_sentence_xml,
    sentence_id,
)

log = logging.getLogger(__name__)

SOURCE = "scisummnet"
DATASET = "scisummnet"  # Paper.dataset of the RPs, CITES.dataset
SILVER = "silver"  # LINKS_TO.method
TextField = Literal["raw_text", "clean_text"]


@dataclass
class _Tables:
    papers: dict[str, dict[str, object]] = field(default_factory=dict)  # RP id -> row
    citing_papers: dict[str, str] = field(default_factory=dict)  # citing id -> origin of its first sentence
    sentences: dict[str, list[object]] = field(
        default_factory=lambda: {k: [] for k in ("id", "paper_id", "sid", "section", "text", ORIGIN_COLUMN)}
    )
    citances: dict[str, str] = field(default_factory=dict)  # citing Sentence.id -> origin (already a node)
    has_sentence: dict[str, list[object]] = field(default_factory=lambda: _edge_columns())
    cites: dict[tuple[str, str], tuple[set[str], str]] = field(default_factory=dict)  # -> (sentence ids, origin)
    mentions: dict[tuple[str, str], str] = field(default_factory=dict)  # (sentence, RP) -> origin
    links: dict[tuple[str, str, str | None], str] = field(default_factory=dict)  # (src, tgt, annotator) -> origin
    authors: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (name, origin)
    wrote: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)  # (author, paper) -> (position, origin)
    rejects: list[Reject] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)


def _edge_columns(*extra: str) -> dict[str, list[object]]:
    return {k: [] for k in (SOURCE_COLUMN, TARGET_COLUMN, *extra, ORIGIN_COLUMN)}


def load(path: Path, *, text_field: TextField = "raw_text") -> GraphBatch:
    """Parse the ScisummNet-2019 folder into a :class:`GraphBatch`; see the module docstring.

    Args:
        path: the ``ScisummNet-2019`` folder.
        text_field: which JSON field becomes a citing sentence's ``text`` (default: ``raw_text``).
    """
    root = Path(path)
    if not root.is_dir():
        raise IngestError(
            f"{SOURCE}: {root} is not a folder; pass scisumm/ScisummNet-2019 or set CITEGRAPH_DATA "
            "to the data folder (see ../shared/data/README.md)"
        )
    if text_field not in ("raw_text", "clean_text"):
        raise IngestError(f"{SOURCE}: text_field is {text_field!r}; expected 'raw_text' or 'clean_text'")
    started = time.perf_counter()
    out = _Tables()
    folders = sorted(p for p in root.iterdir() if p.is_dir())
    for folder in tqdm(folders, desc=root.name, unit=" RPs", disable=None, leave=False):
        _load_folder(folder, out, text_field)
    batch = _batch(out)
    counts = out.counts
    log.info(
        "%s: %d RPs, %d RP sentences, %d citing entries -> %d citing sentences from %d citing papers, "
        "%d MENTIONS, %d silver LINKS_TO, %d authors, %d rejects, %d empty <S> dropped (%.1fs)",
        root.name,
        len(out.papers),
        counts["rp_sentences"],
        counts["citing_entries"],
        len(out.citances),
        len(out.citing_papers),
        len(out.mentions),
        len(out.links),
        len(out.authors),
        len(out.rejects),
        counts["empty"],
        time.perf_counter() - started,
    )
    return batch


def _load_folder(folder: Path, out: _Tables, text_field: TextField) -> None:
    rp_id = acl_id_or_none(folder.name)
    if rp_id is None:
        out.rejects.append(
            Reject("Paper", f"{folder.name}/", f"folder {folder.name!r} is not named by an ACL id; it is skipped")
        )
        return
    xml = folder / "Reference_XML" / f"{folder.name}.xml"
    if not xml.is_file():
        out.rejects.append(Reject("Paper", f"{folder.name}/Reference_XML", f"no {xml.name}; the RP is skipped"))
        return
    where_xml = f"{folder.name}/Reference_XML/{xml.name}"
    parsed = parse_sentence_xml(xml.read_bytes())
    rp_ids = _add_rp_sentences(out, rp_id, parsed, where_xml)
    summary = _lines(folder / "summary" / f"{folder.name}.scisummnet_human.txt")
    abstract = _lines(folder / "summary" / f"{folder.name}.abstract.txt")
    out.papers[rp_id] = {
        "id": rp_id,
        "title": parsed.title or (summary[0] if summary else None),
        "abstract": "\n".join(abstract) or None,
        "summary": "\n".join(summary[1:]) or None,
        "year": acl_year(rp_id),
        "dataset": DATASET,
        "stub": False,
        ORIGIN_COLUMN: f"{where_xml}:1",
    }
    numbered = _read_citing_sentences(folder, rp_id, out, text_field)
    annotation = folder / "annotation" / f"{folder.name}.ann.txt"
    if annotation.is_file():
        _read_silver_links(annotation, folder, rp_id, parsed, rp_ids, numbered, out)


def _add_rp_sentences(out: _Tables, rp_id: str, parsed: ParsedXml, where: str) -> dict[int, str]:
    ids: dict[int, str] = {}
    cols = out.sentences
    for sentence in parsed.sentences:
        key = ids[sentence.sid] = sentence_id(rp_id, sentence.sid)
        origin = f"{where}:{sentence.line}"
        cols["id"].append(key)
        cols["paper_id"].append(rp_id)
        cols["sid"].append(sentence.sid)
        cols["section"].append(sentence.section)
        cols["text"].append(sentence.text)
        cols[ORIGIN_COLUMN].append(origin)
        _has_sentence(out, rp_id, key, origin)
    for bad in parsed.unrecovered:
        out.rejects.append(Reject("Sentence", f"{where}:{bad.line}", bad.reason))
    out.counts["rp_sentences"] += len(parsed.sentences)
    out.counts["empty"] += len(parsed.empty_sids)
    return ids


def _has_sentence(out: _Tables, paper_id: str, key: str, origin: str) -> None:
    out.has_sentence[SOURCE_COLUMN].append(paper_id)
    out.has_sentence[TARGET_COLUMN].append(key)
    out.has_sentence[ORIGIN_COLUMN].append(origin)


def _lines(path: Path) -> list[str]:
    """Non-blank lines of a text file, whitespace-normalised; [] when the file is absent."""
    if not path.is_file():
        return []
    text, _ = decode_lenient(path.read_bytes())
    return [cleaned for line in text.splitlines() if (cleaned := clean_text(line))]


def _read_citing_sentences(folder: Path, rp_id: str, out: _Tables, text_field: TextField) -> dict[int, str | Reject]:
    """Add the RP's citing sentences; returns citance_No -> Sentence.id (or its reject) for the annotation lines."""
    path = folder / "citing_sentences.json"
    where_file = f"{folder.name}/{path.name}"
    if not path.is_file():
        out.rejects.append(Reject("Sentence", where_file, "file is missing; the RP is loaded without citing sentences"))
        return {}
    text, _ = decode_lenient(path.read_bytes())
    entries = _json_array(text, where_file, out)
    numbered: dict[int, str | Reject] = {}
    for line, entry in entries:
        where = f"{where_file}:{line}"
        out.counts["citing_entries"] += 1
        number = entry.get("citance_No") if isinstance(entry, dict) else None
        if not isinstance(number, int) or isinstance(number, bool):
            number = None

        def reject(table_name: str, reason: str, where: str = where, number: int | None = number) -> None:
            out.rejects.append(found := Reject(table_name, where, reason))
            if number is not None:
                numbered.setdefault(number, found)

        if not isinstance(entry, dict):
            reject("Sentence", f"entry is a JSON {type(entry).__name__}, expected an object")
            continue
        raw_id, body = entry.get("citing_paper_id"), entry.get(text_field)
        if not isinstance(raw_id, str) or not raw_id.strip():
            reject("Sentence", f"`citing_paper_id` is {raw_id!r}, expected a paper id")
            continue
        try:
            citing_id = canonical_paper_id(raw_id)
        except PaperIdError:
            reject("Sentence", f"`citing_paper_id` {raw_id!r} is not a paper id")
            continue
        sentence_text = clean_text(body) if isinstance(body, str) else ""
        if not sentence_text:
            reject("Sentence", f"`{text_field}` is {body!r}, expected the sentence")
            continue
        if citing_id == rp_id:
            reject("MENTIONS", f"`citing_paper_id` is the reference paper {rp_id} itself; a paper cannot cite itself")
            continue
        key = citance_id(citing_id, sentence_text)
        if number is not None:
            numbered.setdefault(number, key)
        if key not in out.citances:
            out.citances[key] = where
            cols = out.sentences
            cols["id"].append(key)
            cols["paper_id"].append(citing_id)
            cols["sid"].append(None)
            cols["section"].append(None)
            cols["text"].append(sentence_text)
            cols[ORIGIN_COLUMN].append(where)
            _has_sentence(out, citing_id, key, where)
        if citing_id not in out.citing_papers:
            out.citing_papers[citing_id] = where
            _add_authors(entry.get("citing_paper_authors"), citing_id, where, out)
        out.mentions.setdefault((key, rp_id), where)
        out.cites.setdefault((citing_id, rp_id), (set(), where))[0].add(key)
    return numbered


def _json_array(text: str, where_file: str, out: _Tables) -> list[tuple[int, object]]:
    """The elements of a top-level JSON array with the line each starts on; a reject and [] if it is not one."""
    decoder = json.JSONDecoder()
    position = _skip_space(text, 0)
    if position >= len(text) or text[position] != "[":
        try:  # say what it is instead, if it parses
            value = json.loads(text)
            reason = f"file holds a JSON {type(value).__name__}, expected a list of citing sentences"
        except json.JSONDecodeError as exc:
            reason = f"file is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        out.rejects.append(
            Reject("Sentence", f"{where_file}:1", reason + "; the RP is loaded without citing sentences")
        )
        return []
    entries: list[tuple[int, object]] = []
    position = _skip_space(text, position + 1)
    try:
        if position < len(text) and text[position] == "]":
            return entries
        while True:
            value, end = decoder.raw_decode(text, position)
            entries.append((text.count("\n", 0, position) + 1, value))
            position = _skip_space(text, end)
            if position < len(text) and text[position] == ",":
                position = _skip_space(text, position + 1)
                continue
            if position < len(text) and text[position] == "]":
                return entries
            raise json.JSONDecodeError("expected ',' or ']'", text, position)
    except json.JSONDecodeError as exc:
        line = text.count("\n", 0, exc.pos) + 1
        out.rejects.append(
            Reject(
                "Sentence",
                f"{where_file}:{line}",
                f"file is not JSON from here on ({exc.msg} at column {exc.colno}); the {len(entries)} "
                "entries before it are kept, the rest of the file is lost",
            )
        )
        return entries


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position] in " \t\r\n":
        position += 1
    return position


def author_name(entry: str) -> str:
    """``"First, Last"`` -> ``"First Last"``; entities unescaped, extra commas dropped.

    >>> author_name("Marta Ruiz, Costa-Juss&agrave;"), author_name("James, P., Callan"), author_name("Mausam, ")
    ('Marta Ruiz Costa-Jussà', 'James P. Callan', 'Mausam')
    """
    parts = [" ".join(part.split()) for part in html.unescape(entry).split(",")]
    return " ".join(part for part in parts if part)


def _add_authors(raw: object, paper_id: str, where: str, out: _Tables) -> None:
    if raw is None:
        return
    if not isinstance(raw, str):
        out.rejects.append(Reject("WROTE", where, f"`citing_paper_authors` is {raw!r}, expected 'First, Last | ...'"))
        return
    for position, entry in enumerate((e for e in raw.split("|") if e.strip()), start=1):
        name = author_name(entry)
        key = author_key(name) if name else None
        if key is None:
            out.rejects.append(
                Reject("Author", where, f"author {position} {entry!r} has no letter or digit to key it by")
            )
            continue
        out.authors.setdefault(key, (name, where))
        out.wrote.setdefault((key, paper_id), (position, where))


def _read_silver_links(
    path: Path,
    folder: Path,
    rp_id: str,
    parsed: ParsedXml,
    rp_ids: dict[int, str],
    numbered: dict[int, str | Reject],
    out: _Tables,
) -> None:
    where_file = f"{folder.name}/annotation/{path.name}"
    text, _ = decode_lenient(path.read_bytes())
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{where_file}:{number}"
        fields = parse_annotation_line(line)
        raw_number = fields.get("Citance Number", "")
        if not raw_number.isdigit():
            out.rejects.append(Reject("LINKS_TO", where, f"no usable `Citance Number` ({raw_number!r}): {line[:60]!r}"))
            continue
        source = numbered.get(int(raw_number))
        if not isinstance(source, str):
            reason = (
                f"`Citance Number` {raw_number} is not in {folder.name}/citing_sentences.json"
                if source is None
                else f"the citing sentence of `Citance Number` {raw_number} was rejected at {source.origin}"
            )
            out.rejects.append(Reject("LINKS_TO", where, reason))
            continue
        sids = parse_offsets(fields.get("Reference Offset", ""))
        if not sids:
            out.rejects.append(
                Reject(
                    "LINKS_TO", where, f"`Reference Offset` {fields.get('Reference Offset', '')!r} names no sentence"
                )
            )
            continue
        annotator = fields.get("Annotator") or None
        for sid in sids:
            target = rp_ids.get(sid)
            if target is None:
                state = f"is empty (line {parsed.empty_sids[sid]})" if sid in parsed.empty_sids else "does not exist"
                out.rejects.append(
                    Reject("LINKS_TO", where, f"`Reference Offset` sentence {sid} of {rp_id} {state} in its XML")
                )
                continue
            out.links.setdefault((source, target, annotator), where)


def _batch(out: _Tables) -> GraphBatch:
    rps = list(out.papers.values())
    citing = [(pid, where) for pid, where in out.citing_papers.items() if pid not in out.papers]
    paper_table = table(
        {
            "id": [r["id"] for r in rps] + [pid for pid, _ in citing],
            "title": [r["title"] for r in rps] + [None] * len(citing),
            "abstract": [r["abstract"] for r in rps] + [None] * len(citing),
            "summary": [r["summary"] for r in rps] + [None] * len(citing),
            "year": nullable_ints([r["year"] for r in rps] + [acl_year(pid) for pid, _ in citing]),
            "dataset": [r["dataset"] for r in rps] + [None] * len(citing),
            "stub": [False] * (len(rps) + len(citing)),
            ORIGIN_COLUMN: [r[ORIGIN_COLUMN] for r in rps] + [where for _, where in citing],
        }
    )
    sentences = table({**out.sentences, "sid": nullable_ints(out.sentences["sid"])})
    cites = table(
        {
            SOURCE_COLUMN: [s for s, _ in out.cites],
            TARGET_COLUMN: [t for _, t in out.cites],
            "n_contexts": nullable_ints([len(keys) for keys, _ in out.cites.values()]),
            "dataset": [DATASET] * len(out.cites),
            ORIGIN_COLUMN: [w for _, w in out.cites.values()],
        }
    )
    mentions = table(
        {
            SOURCE_COLUMN: [s for s, _ in out.mentions],
            TARGET_COLUMN: [t for _, t in out.mentions],
            ORIGIN_COLUMN: list(out.mentions.values()),
        }
    )
    links = table(
        {
            SOURCE_COLUMN: [s for s, _, _ in out.links],
            TARGET_COLUMN: [t for _, t, _ in out.links],
            "method": [SILVER] * len(out.links),
            "annotator": [a for _, _, a in out.links],
            ORIGIN_COLUMN: list(out.links.values()),
        }
    )
    authors = table(
        {
            "id": list(out.authors),
            "name": [name for name, _ in out.authors.values()],
            ORIGIN_COLUMN: [where for _, where in out.authors.values()],
        }
    )
    wrote = table(
        {
            SOURCE_COLUMN: [a for a, _ in out.wrote],
            TARGET_COLUMN: [p for _, p in out.wrote],
            "position": nullable_ints([pos for pos, _ in out.wrote.values()]),
            ORIGIN_COLUMN: [where for _, where in out.wrote.values()],
        }
    )
    return GraphBatch(
        SOURCE,
        nodes={"Paper": paper_table, "Author": authors, "Sentence": sentences},
        rels={
            "HAS_SENTENCE": table(out.has_sentence),
            "CITES": cites,
            "MENTIONS": mentions,
            "LINKS_TO": links,
            "WROTE": wrote,
        },
        rejects=out.rejects,
    )


__all__ = ["DATASET", "SILVER", "SOURCE", "author_name", "load"]
