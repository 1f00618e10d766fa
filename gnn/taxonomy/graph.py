r"""The joint taxonomy graph: arXiv categories and ACM classes in one graph, with text features.

Nodes are every ``ArxivCategory`` and every ``AcmClass`` of the store (ACM CCS 1998 and 2012, and
the CoRA topic tree, which the CoRA loader stores as scheme ``cora``). Edges are ``BROADER``
(child class -> parent class) and ``MAPS_TO`` (arXiv category -> ACM 1998 class), as in SymTax
(Goyal et al., 2024, "SymTax: Symbiotic Relationship and Taxonomy Fusion for Effective Citation
Recommendation", https://arxiv.org/abs/2406.01606), where the flat arXiv taxonomy is mapped into
the ACM hierarchy before the fusion.

Node features are the project's text encoder (:mod:`gnn.text.encoder`) applied to :func:`class_text`,
the class name followed by its description: for an arXiv category its description with the
sentences that name ACM codes or aliases removed (codes such as "I.2.7" carry no meaning for a
sentence encoder, and the same boiler-plate sentence on 35 categories would pull them together);
for an ACM 1998 class its subject descriptors; for ACM 2012 and CoRA classes the name alone.

**Inferred MAPS_TO.** Five cs categories name no ACM class in their description (cs.ET, cs.GT,
cs.LG, cs.OH, cs.SY on the shared data). For each such category :math:`c` and every ACM 1998
class :math:`a` the score is the cosine of their text embeddings,

.. math::
    s(c, a) = \frac{x_c^\top x_a}{\lVert x_c \rVert \, \lVert x_a \rVert},

and the ``top_k`` classes with :math:`s \ge \tau` become ``MAPS_TO {score: s, inferred: true}``.
:math:`\tau` defaults to the lower quartile of the scores of the *given* mappings (what a real mapping
scores under this encoder), so the threshold follows the encoder instead of being a magic number.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from gnn.text.encoder import TextEncoder
from graph.errors import ConfigError, DataError
from graph.schema import SOURCE_COLUMN, TARGET_COLUMN
from graph.store import GraphStore

log = logging.getLogger(__name__)

ARXIV = "ArxivCategory"
ACM = "AcmClass"
ACM_1998 = "1998"  # the scheme MAPS_TO points into (arXiv descriptions name ACM CCS 1998 codes)
ARXIV_SCHEME = "arxiv"  # scheme of the arXiv nodes in :attr:`JointTaxonomy.schemes`

# Sentences of arXiv descriptions that name ACM codes or an alias: dropped from the node text.
_ACM_SENTENCE = re.compile(r"[^.]*\bACM\b.*?(?:\.(?=\s|$)|$)")
_ALIAS = re.compile(r"^\s*(?P<code>\S+) is an alias for (?P<target>[\w.-]+?)\.?(?=\s|$)")


def alias_target(description: str | None) -> str | None:
    """The canonical code of an alias category ("cs.SY is an alias for eess.SY." -> ``eess.SY``), else None."""
    if not isinstance(description, str):
        return None
    match = _ALIAS.match(description)
    return match["target"] if match else None


def class_text(name: str | None, description: str | None, *, arxiv: bool = False) -> str:
    """The text a class node is encoded from: ``"<name>. <description>"`` (see the module docstring)."""
    text = description.strip() if isinstance(description, str) else ""  # null (or NaN from pandas): none
    if arxiv and text:
        text = _ALIAS.sub("", text, count=1)
        text = _ACM_SENTENCE.sub("", text)
    text = " ".join(text.split())
    head = " ".join(name.split()) if isinstance(name, str) else ""
    if head and text:
        return f"{head.rstrip('.')}. {text}"
    return head or text


@dataclass(frozen=True)
class JointTaxonomy:
    """ArxivCategory + AcmClass nodes with BROADER and MAPS_TO edges, as index arrays.

    Node ``i`` is the store node ``(labels[i], keys[i])``; arXiv categories come first, then ACM
    classes, each in key order.
    """

    labels: tuple[str, ...]  # "ArxivCategory" or "AcmClass" per node
    keys: tuple[str, ...]  # the store key: ArxivCategory.code or AcmClass.id
    schemes: tuple[str, ...]  # "arxiv" for categories, AcmClass.scheme ("1998", "2012", "cora") for classes
    texts: tuple[str, ...]  # class_text of each node, what the encoder sees
    aliases: tuple[str | None, ...]  # canonical code of an alias arXiv category, else None
    described: tuple[bool, ...]  # the node has a description (not only a name)
    broader: np.ndarray  # int64 [m, 2]: (child, parent)
    maps_to: np.ndarray  # int64 [k, 2]: (arXiv category, ACM class)
    maps_score: np.ndarray  # float64 [k]: MAPS_TO.score (1.0 for given mappings)
    maps_inferred: np.ndarray  # bool [k]: MAPS_TO.inferred

    def __len__(self) -> int:
        return len(self.keys)

    @cached_property
    def index(self) -> dict[tuple[str, str], int]:
        return {(label, key): i for i, (label, key) in enumerate(zip(self.labels, self.keys))}

    def nodes_of(self, label: str) -> np.ndarray:
        """Indices of the nodes with ``label``, in key order."""
        return np.flatnonzero(np.array([lab == label for lab in self.labels], dtype=bool))

    def with_maps_to(self, edges: np.ndarray, score: np.ndarray, inferred: np.ndarray) -> JointTaxonomy:
        """The same graph with other MAPS_TO edges (e.g. given ones plus freshly inferred ones)."""
        return JointTaxonomy(
            self.labels,
            self.keys,
            self.schemes,
            self.texts,
            self.aliases,
            self.described,
            self.broader,
            np.asarray(edges, dtype=np.int64).reshape(-1, 2),
            np.asarray(score, dtype=np.float64),
            np.asarray(inferred, dtype=bool),
        )

    def given_maps_to(self) -> JointTaxonomy:
        """The graph without inferred MAPS_TO edges (what a re-run infers from)."""
        keep = ~self.maps_inferred
        return self.with_maps_to(self.maps_to[keep], self.maps_score[keep], self.maps_inferred[keep])


def read_taxonomy(store: GraphStore) -> JointTaxonomy:
    """The joint graph as stored: every category and class, BROADER and MAPS_TO (given and inferred)."""
    categories = pd.DataFrame(store.query("arxiv_categories"), columns=["code", "name", "description"])
    classes = pd.DataFrame(store.query("acm_classes"), columns=["id", "code", "name", "scheme", "level", "description"])
    if categories.empty and classes.empty:
        raise DataError(
            f"{store.describe()} has no ArxivCategory or AcmClass nodes; run `citegraph ingest taxonomy` "
            "(or `citegraph ingest all`) first"
        )
    categories = categories.sort_values("code", ignore_index=True)
    classes = classes.sort_values("id", ignore_index=True)
    labels = (ARXIV,) * len(categories) + (ACM,) * len(classes)
    keys = tuple(categories["code"].astype(str)) + tuple(classes["id"].astype(str))
    schemes = (ARXIV_SCHEME,) * len(categories) + tuple(str(s) for s in classes["scheme"].fillna(""))
    texts = tuple(class_text(n, d, arxiv=True) for n, d in zip(categories["name"], categories["description"])) + tuple(
        class_text(n, d) for n, d in zip(classes["name"], classes["description"])
    )
    aliases = tuple(alias_target(d) for d in categories["description"]) + (None,) * len(classes)
    described = tuple(isinstance(d, str) and bool(d.strip()) for d in categories["description"]) + tuple(
        isinstance(d, str) and bool(d.strip()) for d in classes["description"]
    )
    index = {(label, key): i for i, (label, key) in enumerate(zip(labels, keys))}

    broader = store.read_edges("BROADER")
    broader_idx = np.array(
        [[index[(ACM, str(s))], index[(ACM, str(t))]] for s, t in zip(broader[SOURCE_COLUMN], broader[TARGET_COLUMN])],
        dtype=np.int64,
    ).reshape(-1, 2)
    maps = store.read_edges("MAPS_TO")
    maps_idx = np.array(
        [[index[(ARXIV, str(s))], index[(ACM, str(t))]] for s, t in zip(maps[SOURCE_COLUMN], maps[TARGET_COLUMN])],
        dtype=np.int64,
    ).reshape(-1, 2)
    score = maps["score"].astype(float).fillna(1.0).to_numpy() if len(maps) else np.zeros(0)
    inferred = maps["inferred"].fillna(False).astype(bool).to_numpy() if len(maps) else np.zeros(0, dtype=bool)
    return JointTaxonomy(labels, keys, schemes, texts, aliases, described, broader_idx, maps_idx, score, inferred)


def encode_classes(taxonomy: JointTaxonomy, encoder: TextEncoder, *, progress: bool = False) -> np.ndarray:
    """float32 [n, d]: unit text embeddings of every node's :func:`class_text` (cached by the encoder)."""
    return encoder.encode(list(taxonomy.texts), progress=progress, desc="encode classes")


@dataclass(frozen=True)
class MapsToInference:
    """Inferred MAPS_TO edges and how they were chosen."""

    edges: pd.DataFrame  # source (category code), target (ACM id), score, inferred (True)
    categories: tuple[str, ...]  # the cs categories that had no given mapping
    threshold: float  # τ: the smallest score kept
    given_scores: np.ndarray  # float64: cosine of every given (category, ACM class) pair, for the report


def unmapped_cs_categories(taxonomy: JointTaxonomy) -> list[int]:
    """Indices of cs categories without a given MAPS_TO (the ones whose description names no ACM class)."""
    given = taxonomy.given_maps_to()
    mapped = set(given.maps_to[:, 0].tolist())
    return [i for i in taxonomy.nodes_of(ARXIV).tolist() if taxonomy.keys[i].startswith("cs.") and i not in mapped]


def infer_maps_to(
    taxonomy: JointTaxonomy,
    features: np.ndarray,
    *,
    top_k: int = 3,
    min_score: float | None = None,
    quantile: float = 0.25,
) -> MapsToInference:
    """MAPS_TO for the unmapped cs categories by text similarity (module docstring: :math:`s`, :math:`\\tau`).

    ``min_score`` fixes :math:`\\tau`; ``None`` takes the ``quantile`` of the given pairs' scores.
    Inferred edges already in ``taxonomy`` are ignored: a re-run infers from the given ones only.
    """
    if top_k < 1:
        raise ConfigError(f"top_k is {top_k}; infer at least one ACM class per category (default 3)")
    given = taxonomy.given_maps_to()
    unit = features / np.linalg.norm(features, axis=1, keepdims=True).clip(min=1e-12)  # clip: a zero row stays zero
    given_scores = (
        np.einsum("ij,ij->i", unit[given.maps_to[:, 0]], unit[given.maps_to[:, 1]]).astype(np.float64)
        if len(given.maps_to)
        else np.zeros(0)
    )
    if min_score is not None:
        threshold = float(min_score)
    elif len(given_scores):
        threshold = float(np.quantile(given_scores, quantile))
    else:
        raise DataError(
            "no given MAPS_TO edge to calibrate the threshold on; pass a fixed minimum score for inferred mappings"
        )
    candidates = np.array([i for i, s in enumerate(taxonomy.schemes) if s == ACM_1998], dtype=np.int64)
    unmapped = unmapped_cs_categories(taxonomy)
    rows: list[tuple[str, str, float]] = []
    if len(candidates):
        for i in unmapped:
            scores = unit[candidates] @ unit[i]  # [n_candidates]
            order = np.argsort(-scores, kind="stable")[:top_k]
            rows += [
                (taxonomy.keys[i], taxonomy.keys[candidates[j]], float(scores[j]))
                for j in order
                if scores[j] >= threshold
            ]
    edges = pd.DataFrame(rows, columns=[SOURCE_COLUMN, TARGET_COLUMN, "score"])
    edges["inferred"] = True
    log.debug(  # compute_taxonomy's report says the same
        "inferred %d MAPS_TO edges for %d unmapped cs categories (threshold %.3f)", len(edges), len(unmapped), threshold
    )
    return MapsToInference(edges, tuple(taxonomy.keys[i] for i in unmapped), threshold, given_scores)


def apply_maps_to(taxonomy: JointTaxonomy, inferred: pd.DataFrame) -> JointTaxonomy:
    """The graph with its given MAPS_TO edges plus ``inferred`` (replacing any earlier inferred ones)."""
    given = taxonomy.given_maps_to()
    new = np.array(
        [
            [taxonomy.index[(ARXIV, s)], taxonomy.index[(ACM, t)]]
            for s, t in zip(inferred[SOURCE_COLUMN], inferred[TARGET_COLUMN])
        ],
        dtype=np.int64,
    ).reshape(-1, 2)
    return given.with_maps_to(
        np.concatenate([given.maps_to, new]),
        np.concatenate([given.maps_score, inferred["score"].to_numpy(dtype=np.float64)]),
        np.concatenate([given.maps_inferred, np.ones(len(new), dtype=bool)]),
    )


def write_maps_to(store: GraphStore, inferred: pd.DataFrame) -> int:
    """Replace the store's inferred MAPS_TO edges by ``inferred``; given ones are written back unchanged.

    Returns the number of MAPS_TO edges after the write.
    """
    columns = [SOURCE_COLUMN, TARGET_COLUMN, "score", "inferred"]
    stored = store.read_edges("MAPS_TO")
    given = stored.loc[~stored["inferred"].fillna(False).astype(bool), columns] if len(stored) else None
    merged = pd.concat([given, inferred[columns]], ignore_index=True) if given is not None else inferred[columns]
    return store.replace_edges("MAPS_TO", merged)


__all__ = [
    "ACM",
    "ACM_1998",
    "ARXIV",
    "JointTaxonomy",
    "MapsToInference",
    "alias_target",
    "apply_maps_to",
    "class_text",
    "encode_classes",
    "infer_maps_to",
    "read_taxonomy",
    "unmapped_cs_categories",
    "write_maps_to",
]
