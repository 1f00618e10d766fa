"""Keywords of works, as the sources give them: one ``Keyword`` node per kind and normalised term.

Science-mapping tools count keywords, and a keyword co-occurrence map is only as good as the joining of a
term's spellings. Each loader hands the keywords of a work to :class:`KeywordRows`; this module turns them
into the ``Keyword {id, name, kind}`` table and ``(:Paper)-[:HAS_KEYWORD {score}]->(:Keyword)`` (one edge per
work and keyword). Kinds (:data:`KINDS`):

======================  ==============================================================================
kind                    from
======================  ==============================================================================
``author``              Web of Science ``DE``, Scopus ``Author Keywords``, JSONL ``keywords``
``plus``                Web of Science ``ID`` (Keywords Plus, Clarivate's terms from cited titles)
``index``               Scopus ``Index Keywords``
``openalex_keyword``    OpenAlex ``keywords[].display_name`` (with its ``score``)
``topic``               OpenAlex ``topics[]``/``primary_topic`` ``display_name`` (with its ``score``)
``field_of_study``      OpenAlex topics' ``field.display_name``; Semantic Scholar ``fieldsOfStudy`` and
                        ``s2FieldsOfStudy[].category``
======================  ==============================================================================

Normalisation (:func:`normalise_keyword`), stated so that a count can be checked by hand: Unicode NFKC, lower
case, hyphens, dashes, underscores and slashes as spaces, punctuation other than brackets at either end dropped, runs of
white space made one space; then the *last* word loses a plural ending, in the spirit of bibliometrix's
``termExtraction(..., stemming=TRUE)`` but without a stemmer: ``-ies`` → ``-y`` ("technologies"),
``-sses``/``-shes``/``-ches``/``-xes`` → drop ``es``, else a final ``s`` is dropped unless the word ends in
``ss``, ``us``, ``is``, ``ics`` or ``ys`` or has three letters or fewer ("networks" → "network", "analysis",
"bibliometrics", "gas" stay). The id is ``<kind>:<normalised term>``; ``name`` is the term's most frequent
spelling in the batch (an all-capitals spelling, as Keywords Plus prints them, lower-cased).

A VOSviewer thesaurus (``label<TAB>replace by``; :class:`KeywordThesaurus`, ``citegraph ingest
--keyword-thesaurus FILE`` or ``$CITEGRAPH_KEYWORD_THESAURUS``) joins terms after normalisation: a
``label`` becomes its ``replace by`` (in every kind), and an empty ``replace by`` drops the term, as in
VOSviewer.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from graph.errors import IngestError
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from loaders._common import table

AUTHOR = "author"
PLUS = "plus"
INDEX = "index"
OPENALEX_KEYWORD = "openalex_keyword"
TOPIC = "topic"
FIELD_OF_STUDY = "field_of_study"
KINDS = (AUTHOR, PLUS, INDEX, OPENALEX_KEYWORD, TOPIC, FIELD_OF_STUDY)
KEYWORD_TABLE, HAS_KEYWORD = "Keyword", "HAS_KEYWORD"
THESAURUS_ENV = "CITEGRAPH_KEYWORD_THESAURUS"  # a keyword thesaurus every `citegraph ingest` honours

_SEPARATORS = re.compile(r"[\s\-‐‑‒–—―_/]+")
_EDGE_PUNCTUATION = " .,;:!?'\"*#"  # brackets stay: "internet of things (iot)" keeps its closing one
_KEEP_S = ("ss", "us", "is", "ics", "ys")


def normalise_keyword(text: str) -> str | None:
    """The form a term is counted under (see the module docstring); None for a term with no letter or digit."""
    words = _SEPARATORS.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip(_EDGE_PUNCTUATION).split()
    if not words or not any(ch.isalnum() for ch in "".join(words)):
        return None
    words[-1] = _singular(words[-1])
    return " ".join(words)


def _singular(word: str) -> str:
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(_KEEP_S):
        return word[:-1]
    return word


def keyword_id(kind: str, text: str) -> str | None:
    """``<kind>:<normalised term>``, the ``Keyword`` key; None when the term normalises to nothing."""
    form = normalise_keyword(text)
    return f"{kind}:{form}" if form else None


def split_keywords(text: str | None) -> list[str]:
    """The terms of a ``;``-separated keyword field (WoS ``DE``/``ID``, Scopus keywords), white space collapsed."""
    if not text:
        return []
    return [" ".join(part.split()) for part in text.split(";") if part.strip()]


@dataclass
class KeywordRows:
    """The keywords of a batch's works, gathered as a loader reads them."""

    papers: list[str] = field(default_factory=list)  # paper key per use
    ids: list[str] = field(default_factory=list)  # keyword id per use
    scores: list[float | None] = field(default_factory=list)
    origins: list[str] = field(default_factory=list)
    spellings: dict[str, Counter[str]] = field(default_factory=dict)  # keyword id -> spelling -> uses
    kinds: dict[str, str] = field(default_factory=dict)  # keyword id -> kind

    def add(self, paper: str, kind: str, text: object, where: str, score: object = None) -> None:
        """One use of a term on a work; a term that is not text or normalises to nothing is skipped."""
        if not isinstance(text, str) or (key := keyword_id(kind, text)) is None:
            return
        self.papers.append(paper)
        self.ids.append(key)
        self.scores.append(float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None)
        self.origins.append(where)
        self.spellings.setdefault(key, Counter())[" ".join(text.split())] += 1
        self.kinds[key] = kind

    def add_all(self, paper: str, kind: str, terms: Iterable[str], where: str) -> None:
        for term in terms:
            self.add(paper, kind, term, where)

    def extend(self, part: KeywordRows) -> None:
        """Append the uses of ``part`` (read after these, e.g. a later block of the same file): the spellings'
        counts add up, so the most frequent spelling is the one a single reader would have found."""
        self.papers += part.papers
        self.ids += part.ids
        self.scores += part.scores
        self.origins += part.origins
        for key, spellings in part.spellings.items():
            self.spellings.setdefault(key, Counter()).update(spellings)
        self.kinds.update(part.kinds)

    def keep(self, alive: Iterable[bool]) -> KeywordRows:
        """Only the uses whose flag is true (the works of a batch that were not superseded)."""
        kept = KeywordRows(spellings=self.spellings, kinds=self.kinds)
        for flag, paper, key, score, where in zip(alive, self.papers, self.ids, self.scores, self.origins):
            if flag:
                kept.papers.append(paper)
                kept.ids.append(key)
                kept.scores.append(score)
                kept.origins.append(where)
        return kept

    def tables(self, papers: Iterable[str] | None = None) -> dict[str, pd.DataFrame]:
        """``{"Keyword": nodes, "HAS_KEYWORD": edges}`` (empty dict when there is no keyword).

        ``papers``: the uses' paper keys re-keyed (the loader learned the final keys after reading). One edge
        per work and keyword: the first use's origin, the highest score.
        """
        keys = list(papers) if papers is not None else self.papers
        edges: dict[tuple[str, str], tuple[float | None, str]] = {}
        for paper, key, score, where in zip(keys, self.ids, self.scores, self.origins):
            old = edges.get((paper, key))
            if old is None:
                edges[(paper, key)] = (score, where)
            elif score is not None and (old[0] is None or score > old[0]):
                edges[(paper, key)] = (score, old[1])
        if not edges:
            return {}
        used = dict.fromkeys(key for _, key in edges)
        first_origin: dict[str, str] = {}
        for (_, key), (_, where) in edges.items():
            first_origin.setdefault(key, where)
        nodes = table(
            {
                "id": list(used),
                "name": [display_name(self.spellings[key]) for key in used],
                "kind": [self.kinds[key] for key in used],
                ORIGIN_COLUMN: [first_origin[key] for key in used],
            }
        )
        rels = table(
            {
                SOURCE_COLUMN: [paper for paper, _ in edges],
                TARGET_COLUMN: [key for _, key in edges],
                "score": pd.Series([s for s, _ in edges.values()], dtype="float64"),
                ORIGIN_COLUMN: [where for _, where in edges.values()],
            }
        )
        return {KEYWORD_TABLE: nodes, HAS_KEYWORD: rels}


def display_name(spellings: Counter[str]) -> str:
    """The most frequent spelling (ties: the first seen), lower-cased when it is all capitals (Keywords Plus)."""
    name = spellings.most_common(1)[0][0]
    return name.lower() if name.isupper() else name


@dataclass(frozen=True)
class KeywordThesaurus:
    """A VOSviewer thesaurus of terms: ``label<TAB>replace by`` per line (a ``label<TAB>replace by`` header,
    ``#`` comments and blank lines allowed). Both columns are compared in :func:`normalise_keyword` form; an
    empty ``replace by`` drops the term."""

    # normalised label -> (normalised replacement, its spelling in the file), or None: drop the term
    replace: dict[str, tuple[str, str] | None] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> KeywordThesaurus:
        try:
            lines = Path(path).read_text(encoding="utf-8-sig").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise IngestError(
                f"keyword thesaurus {path}: cannot read it ({exc}); give a UTF-8 text file of "
                "'label<TAB>replace by' lines"
            ) from exc
        replace: dict[str, tuple[str, str] | None] = {}
        for number, line in enumerate(lines, start=1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            label, tab, by = line.partition("\t")
            if not tab or not label.strip():
                raise IngestError(
                    f"keyword thesaurus {path}, line {number}: {line[:80]!r} is not 'label<TAB>replace by'; "
                    "separate the two with one tab (VOSviewer's thesaurus format; an empty 'replace by' drops the term)"
                )
            if number == 1 and label.strip().lower() == "label":
                continue
            form, target = normalise_keyword(label), normalise_keyword(by)
            if form is not None:
                replace[form] = (target, " ".join(by.split())) if target else None
        return cls(replace)

    def apply(self, batch: GraphBatch) -> GraphBatch:
        """``batch`` with its ``Keyword`` and ``HAS_KEYWORD`` tables rewritten by the thesaurus (others as they are).

        A joined term takes the name of the batch's node already under the replacement (else the thesaurus'
        spelling); a work that had both terms keeps one edge, with the higher score.
        """
        nodes, rels = batch.nodes.get(KEYWORD_TABLE), batch.rels.get(HAS_KEYWORD)
        if nodes is None or rels is None or not self.replace:
            return batch
        new_id: dict[str, str | None] = {}
        spelled: dict[str, str] = {}
        for key, kind in zip(nodes["id"], nodes["kind"]):
            form = str(key).split(":", 1)[1]
            if form not in self.replace:
                new_id[key] = key
            elif (target := self.replace[form]) is None:
                new_id[key] = None
            else:
                joined = new_id[key] = f"{kind}:{target[0]}"
                spelled.setdefault(joined, target[1])
        own_name = {key: name for key, name in zip(nodes["id"], nodes["name"]) if new_id[key] == key}
        rows: dict[str, list[object]] = {name: [] for name in nodes.columns}
        seen: set[str] = set()
        for record in nodes.to_dict("records"):
            key = new_id[record["id"]]
            if key is None or key in seen:
                continue
            seen.add(key)
            record["id"], record["name"] = key, own_name.get(key, spelled.get(key, record["name"]))
            for name in rows:
                rows[name].append(record[name])
        out_rels = rels.assign(**{TARGET_COLUMN: rels[TARGET_COLUMN].map(new_id)})
        out_rels = out_rels[out_rels[TARGET_COLUMN].notna()]
        out_rels = (
            out_rels.assign(_order=range(len(out_rels)))
            .sort_values(["score", "_order"], ascending=[False, True], na_position="last", kind="stable")
            .drop_duplicates([SOURCE_COLUMN, TARGET_COLUMN], keep="first")
            .sort_values("_order")
            .drop(columns="_order")
            .reset_index(drop=True)
        )
        nodes_out = {**batch.nodes, KEYWORD_TABLE: table(rows)}
        rels_out = {**batch.rels, HAS_KEYWORD: out_rels}
        return GraphBatch(batch.source, nodes_out, rels_out, batch.rejects)


def thesaurus_from_env() -> KeywordThesaurus | None:
    """The thesaurus named by ``$CITEGRAPH_KEYWORD_THESAURUS``, or None when it is unset."""
    path = os.environ.get(THESAURUS_ENV, "").strip()
    return KeywordThesaurus.read(Path(path)) if path else None


__all__ = [
    "AUTHOR",
    "FIELD_OF_STUDY",
    "HAS_KEYWORD",
    "INDEX",
    "KEYWORD_TABLE",
    "KINDS",
    "OPENALEX_KEYWORD",
    "PLUS",
    "THESAURUS_ENV",
    "TOPIC",
    "KeywordRows",
    "KeywordThesaurus",
    "display_name",
    "keyword_id",
    "normalise_keyword",
    "split_keywords",
    "thesaurus_from_env",
]
