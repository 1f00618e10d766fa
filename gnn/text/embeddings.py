"""``citegraph compute embeddings``: text embeddings of papers and sentences, written back to the graph.

What is encoded:

* a **paper** as ``"<title>. <abstract>"``; the title alone where there is no abstract; for a
  full-text paper without an ``abstract`` property, the abstract is rebuilt from its sentences in
  the ``Abstract`` section (in ``sid`` order). A paper with neither title nor abstract (a cited
  work known from a bibliography) is its ``reference``, the reference string a citing paper
  printed (authors, title, venue, year): it holds the title's words, and without it the work could
  never be retrieved. One with no text at all (a bare id) gets no embedding and is counted as such;
* a **sentence** as its text.

Incremental: each node stores ``embedding_hash``, the encoder's cache key of the text its vector
came from (it covers the model and max length too). A re-run encodes and writes only nodes whose
text (or encoder) changed, and clears the vector of a node whose text disappeared. Vectors
themselves come from the encoder's on-disk cache when it has seen the text before, so rebuilding
the store costs a read of the cache, not a re-encode.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from gnn.text.encoder import TextEncoder
from graph.errors import ConfigError
from graph.schema import ABSTRACT_SECTION
from graph.store import GraphStore

log = logging.getLogger(__name__)

TARGETS = ("papers", "sentences")


@dataclass(frozen=True)
class EmbeddingSettings:
    targets: tuple[str, ...] = TARGETS  # which node kinds to embed: papers, sentences or both
    write_batch: int = 20_000  # nodes per write transaction: bounds memory, keeps progress on interrupt
    force: bool = field(
        default=False, metadata={"help": "re-write every embedding, even where the text is unchanged"}
    )  # re-write every vector even when its text hash is unchanged
    # At most this many papers/sentences get new vectors in one run, most-cited papers first (sentences:
    # those of most-cited papers first); the rest stay for a later run. None: all. The demo's scaled-down
    # default: every later run continues where this one stopped, since unchanged vectors are skipped.
    limit: int | None = field(
        default=None,
        metadata={
            "help": "embed at most N new texts per kind, most-cited papers first; a later run continues (default: all)"
        },
    )


@dataclass(frozen=True)
class EmbeddingReport:
    label: str
    nodes: int  # nodes of the label in the store
    with_text: int  # nodes that have a text to encode
    unchanged: int  # stored vector already matches the text: skipped
    written: int  # vectors written (new or changed text)
    deferred: int  # new or changed texts left for a later run by `limit`
    cleared: int  # vectors removed because the node no longer has a text
    from_cache: int  # of the written ones, served by the encoder's disk cache
    seconds: float

    def line(self) -> str:
        return (
            f"{self.label:<9} {self.nodes:>8} nodes  {self.with_text:>8} with text  {self.unchanged:>8} unchanged  "
            f"{self.written:>8} written ({self.from_cache} from cache)  {self.cleared} cleared  "
            f"{self.deferred} left for a later run  {self.seconds:.1f}s"
        )


def clean_texts(values: pd.Series) -> pd.Series:
    """Texts stripped of surrounding white space, ``""`` where missing."""
    # object first: a column that is all missing reads as float64, which takes no "" fill
    return values.astype(object).where(values.notna(), "").astype(str).str.strip()


def titles_and_abstracts(store: GraphStore) -> pd.DataFrame:
    """``id``, ``title``, ``abstract`` (empty strings when missing; an abstract the graph holds only as
    sentences is rebuilt from them), ``reference`` (the paper's reference string where it has neither
    title nor abstract, else empty) and the stored ``embedding_hash`` of every paper."""
    papers = pd.DataFrame(
        store.query("paper_texts"), columns=["id", "title", "abstract", "reference", "embedding_hash"]
    )
    sentences = pd.DataFrame(
        store.query("abstract_sentences", {"section": ABSTRACT_SECTION}), columns=["paper_id", "sid", "text"]
    ).dropna(subset=["text"])  # a sentence without text adds nothing (and a null would fail the join below)
    rebuilt = (
        sentences.sort_values(["paper_id", "sid"]).groupby("paper_id")["text"].agg(lambda t: " ".join(t.astype(str)))
        if not sentences.empty
        else pd.Series(dtype=str)
    )
    title, abstract = clean_texts(papers["title"]), clean_texts(papers["abstract"])
    abstract = abstract.where(abstract != "", clean_texts(papers["id"].map(rebuilt)))
    # A reference string stands in only for a paper without text of its own: where a title or an
    # abstract exists it is the better description (a reference adds author names and page numbers).
    reference = clean_texts(papers["reference"]).where((title == "") & (abstract == ""), "")
    return papers.assign(title=title, abstract=abstract, reference=reference)


def paper_texts(store: GraphStore) -> pd.DataFrame:
    """``id``, ``text`` (empty when the paper has nothing to encode) and the stored ``embedding_hash``."""
    papers = titles_and_abstracts(store)
    title, abstract = papers["title"], papers["abstract"]
    title_dot = title.where(title.str.endswith((".", "?", "!")) | (title == ""), title + ".")
    # `reference` is empty wherever title or abstract is not (titles_and_abstracts), so this is the
    # reference string alone for a paper known only from a bibliography.
    text = (title_dot + " " + abstract + " " + papers["reference"]).str.strip()
    priority = papers["id"].map(_citation_counts(store)).fillna(0).astype("int64")
    # Papers with given arXiv categories come first of all: the taxonomy step calibrates category
    # inference on them, so a limited run must not leave them out.
    given = store.read_edges("IN_CATEGORY")
    if not given.empty:
        inferred = given["inferred"].fillna(False).astype(bool) if "inferred" in given else False
        categorised = papers["id"].isin(given.loc[~inferred, "source"])
        priority = priority.where(~categorised, int(priority.max()) + 1)
    return pd.DataFrame(
        {"id": papers["id"], "text": text, "embedding_hash": papers["embedding_hash"], "priority": priority}
    )


def _citation_counts(store: GraphStore) -> pd.Series:
    """Incoming CITES per paper id (papers never cited are absent)."""
    rows = pd.DataFrame(store.query("in_degree"), columns=["id", "n_cited"])
    return rows.set_index("id")["n_cited"]


def sentence_texts(store: GraphStore) -> pd.DataFrame:
    rows = pd.DataFrame(store.query("sentence_texts"), columns=["id", "text", "embedding_hash"])
    rows["text"] = clean_texts(rows["text"])
    paper_of_sentence = rows["id"].str.rsplit("#", n=1).str[0]  # Sentence.id is "<paper_id>#<sid>"
    rows["priority"] = paper_of_sentence.map(_citation_counts(store)).fillna(0).astype("int64")
    return rows


def _embed_label(
    store: GraphStore, encoder: TextEncoder, label: str, rows: pd.DataFrame, settings: EmbeddingSettings, progress: bool
) -> EmbeddingReport:
    start = time.perf_counter()
    has_text = rows["text"] != ""
    hashes = pd.Series(
        [encoder.text_hash(t) if ok else None for t, ok in zip(rows["text"], has_text)], index=rows.index
    )
    stored = rows["embedding_hash"]
    changed = has_text & ((stored != hashes) | stored.isna() | settings.force)
    gone = ~has_text & stored.notna()
    todo = rows[changed]
    deferred = 0
    if settings.limit is not None and len(todo) > settings.limit:
        # Most-cited first: those are the papers recommendations and analyses reach most often.
        order = todo.assign(_rank=todo["priority"]).sort_values(["_rank", "id"], ascending=[False, True])
        deferred = len(todo) - settings.limit
        todo = order.head(settings.limit).drop(columns="_rank")
    encoded_before = encoder.encoded
    bar = tqdm(total=len(todo), desc=f"embed {label.lower()}s", unit="text", disable=not progress)
    for begin in range(0, len(todo), settings.write_batch):
        part = todo.iloc[begin : begin + settings.write_batch]
        vectors = encoder.encode(part["text"].tolist(), bar=bar)
        frame = pd.DataFrame(
            {"id": part["id"].to_numpy(), "embedding": list(vectors), "embedding_hash": hashes[part.index].to_numpy()}
        )
        store.write_node_properties(label, "id", frame)
    bar.close()
    if gone.any():
        cleared = rows.loc[gone, ["id"]].assign(embedding=None, embedding_hash=None)
        store.write_node_properties(label, "id", cleared)
    return EmbeddingReport(
        label=label,
        nodes=len(rows),
        with_text=int(has_text.sum()),
        unchanged=int((has_text & ~changed).sum()),
        written=len(todo),
        deferred=deferred,
        cleared=int(gone.sum()),
        from_cache=len(todo) - (encoder.encoded - encoded_before),
        seconds=time.perf_counter() - start,
    )


def compute_embeddings(
    store: GraphStore,
    encoder: TextEncoder,
    settings: EmbeddingSettings = EmbeddingSettings(),
    *,
    progress: bool = False,
) -> list[EmbeddingReport]:
    """Embed papers and/or sentences and write ``embedding`` + ``embedding_hash`` back (see module docstring)."""
    if store.schema.sizes.embedding != encoder.dim:
        raise ConfigError(
            f"the encoder gives {encoder.dim}-d vectors but {store.describe()} stores {store.schema.sizes.embedding}-d "
            f"embeddings; set CITEGRAPH_EMBEDDING_DIM={encoder.dim} for a new store or pick a {store.schema.sizes.embedding}-d encoder"
        )
    reports = []
    if "papers" in settings.targets:
        reports.append(_embed_label(store, encoder, "Paper", paper_texts(store), settings, progress))
    if "sentences" in settings.targets:
        reports.append(_embed_label(store, encoder, "Sentence", sentence_texts(store), settings, progress))
    return reports


def stored_embeddings(rows: list[dict[str, object]], dim: int) -> tuple[list[str], np.ndarray]:
    """Split ``[{id, embedding}]`` rows into ids and a ``(n, dim)`` float32 matrix, skipping missing vectors."""
    ids = [str(r["id"]) for r in rows if r.get("embedding") is not None]
    matrix = np.asarray([r["embedding"] for r in rows if r.get("embedding") is not None], dtype=np.float32)
    return ids, matrix.reshape(len(ids), dim)


__all__ = [
    "ABSTRACT_SECTION",
    "TARGETS",
    "EmbeddingReport",
    "EmbeddingSettings",
    "clean_texts",
    "compute_embeddings",
    "paper_texts",
    "sentence_texts",
    "stored_embeddings",
    "titles_and_abstracts",
]
