r"""The thematic map: each keyword cluster placed by Callon centrality and density.

Callon, Courtial & Laville (1991, Scientometrics 22:155) measure a theme (a cluster of co-occurring
keywords) by the equivalence index of its links, Cobo et al. (2011, J. Informetrics 5:146) place the themes
on a strategic diagram, and bibliometrix's ``thematicMap`` does both on the keyword co-occurrence network
(:mod:`gnn.mapping.keywords`). With :math:`c_{ij}` the documents that carry keywords i and j and
:math:`c_i` those that carry i,

.. math::
    e_{ij} = \frac{c_{ij}^2}{c_i\,c_j}, \qquad
    \text{centrality}_k = 10 \sum_{i \in k,\, h \notin k} e_{ih}, \qquad
    \text{density}_k = \frac{100}{|k|} \sum_{i<j \in k} e_{ij}

(each link counted once: a link from the cluster to another cluster for centrality, a pair of its own
keywords for density). Centrality says how strongly a theme is tied to the others, density how strongly
its keywords are tied to each other. The quadrants are split at the *medians* of centrality and density
over the map's clusters (bibliometrix splits ranks at their mean, which is the same cut for rank
values; a value equal to the median counts as high):

=====================  ===========  ========  ================================================
quadrant               centrality   density   reading (Cobo et al. 2011)
=====================  ===========  ========  ================================================
``motor``              high         high      well developed and central: drive the field
``niche``              low          high      well developed internally, marginal to the field
``emerging/declining`` low          low       weakly developed and marginal
``basic``              high         low       central but not developed: transversal themes
=====================  ===========  ========  ================================================

A theme's ``documents`` are the window's documents that carry at least one of its keywords;
``occurrences`` sums its keywords' documents (bibliometrix's ``freq``).
"""

from __future__ import annotations

import csv
import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from gnn.mapping.keywords import Cooccurrence, cooccurrence, keyword_clusters, read_keyword_uses
from gnn.mapping.networks import NetworkFilters
from graph.errors import ConfigError
from graph.store import GraphStore

log = logging.getLogger(__name__)

MOTOR, NICHE, EMERGING, BASIC = "motor", "niche", "emerging/declining", "basic"
QUADRANTS = (MOTOR, NICHE, EMERGING, BASIC)
THEMATIC_FORMATS = ("csv", "json")
KEYWORD_PROPERTIES = ["cluster", "cluster_label", "quadrant"]
DEFAULT_TOP = 250  # bibliometrix thematicMap's n: the 250 most frequent keywords


def equivalence(counts: sp.csr_matrix, weights: np.ndarray) -> sp.csr_matrix:
    """:math:`e_{ij} = c_{ij}^2 / (c_i c_j)` on the links of ``counts`` (same sparsity pattern)."""
    coo = counts.tocoo()
    w = weights.astype(np.float64)
    values = coo.data.astype(np.float64) ** 2 / (w[coo.row] * w[coo.col])
    return sp.csr_matrix((values, (coo.row, coo.col)), shape=counts.shape)


def callon(counts: sp.csr_matrix, weights: np.ndarray, membership: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Callon centrality and density per cluster ``0..K-1`` (see the module docstring).

    ``counts`` is the symmetric co-occurrence matrix (zero diagonal), ``weights`` the keywords' document
    counts, ``membership`` a cluster number per keyword (-1: in no cluster, left out).
    """
    k = int(membership.max()) + 1 if len(membership) else 0
    upper = sp.triu(equivalence(counts, weights), k=1).tocoo()
    a, b = membership[upper.row], membership[upper.col]
    both = (a >= 0) & (b >= 0)
    a, b, e = a[both], b[both], upper.data[both]
    inside = a == b
    density_sum = np.bincount(a[inside], weights=e[inside], minlength=k)
    between = ~inside
    centrality = 10.0 * (
        np.bincount(a[between], weights=e[between], minlength=k)
        + np.bincount(b[between], weights=e[between], minlength=k)
    )
    sizes = np.bincount(membership[membership >= 0], minlength=k)
    density = 100.0 * density_sum / np.maximum(sizes, 1)
    return centrality, density


def quadrants(centrality: np.ndarray, density: np.ndarray) -> list[str]:
    """Each cluster's quadrant, split at the medians (a value equal to the median is high)."""
    if len(centrality) == 0:
        return []
    high_c = centrality >= np.median(centrality)
    high_d = density >= np.median(density)
    return [
        (MOTOR if d else BASIC) if c else (NICHE if d else EMERGING) for c, d in zip(high_c.tolist(), high_d.tolist())
    ]


@dataclass(frozen=True)
class Theme:
    """One cluster of the thematic map."""

    cluster: int  # 0 is the largest cluster (most keywords)
    label: str  # its most frequent keyword's name
    keywords: tuple[str, ...]  # names, most documents first
    keyword_ids: tuple[str, ...]  # the same keywords' ids
    centrality: float  # Callon centrality
    density: float  # Callon density
    quadrant: str  # one of QUADRANTS
    documents: int  # window documents carrying one of its keywords
    occurrences: int  # sum of its keywords' documents


@dataclass(frozen=True)
class ThematicMap:
    """The themes of a window, and what they were computed from."""

    filters: NetworkFilters
    kinds: tuple[str, ...]  # the keyword kinds mapped
    documents: int  # window documents with a keyword of those kinds
    keywords: int  # keywords in the network (at most filters.top)
    themes: list[Theme] = field(default_factory=list)
    membership: dict[str, int] = field(default_factory=dict)  # keyword id -> cluster (clustered keywords only)

    def summary(self) -> str:
        kinds = ", ".join(self.kinds) or "none"
        lines = [
            f"thematic map: {len(self.themes)} themes of {self.keywords} keywords ({kinds}) "
            f"over {self.documents} documents"
        ]
        for t in self.themes:
            lines.append(
                f"  {t.cluster:>3}  {t.quadrant:<18} centrality {t.centrality:8.3f}  density {t.density:8.3f}  "
                f"{t.documents:>6} docs  {t.label}: {', '.join(t.keywords[:5])}"
            )
        return "\n".join(lines)


def thematic_map_of(
    co: Cooccurrence, names: Sequence[str], filters: NetworkFilters, *, resolution: float = 1.0, seed: int = 0
) -> ThematicMap:
    """The thematic map of a co-occurrence network whose keywords are called ``names``."""
    membership, label_ids = keyword_clusters(co, resolution=resolution, seed=seed)
    centrality, density = callon(co.counts, co.weights, membership)
    quadrant = quadrants(centrality, density)
    name_of = dict(zip(co.keywords.astype(str), names))
    themes = []
    for number, label_id in enumerate(label_ids):
        members = np.flatnonzero(membership == number)  # keywords are ordered by weight: most documents first
        documents = int((co.incidence[:, members].sum(axis=1) > 0).sum())
        themes.append(
            Theme(
                cluster=number,
                label=name_of[label_id],
                keywords=tuple(names[int(m)] for m in members),
                keyword_ids=tuple(str(co.keywords[m]) for m in members),
                centrality=float(centrality[number]),
                density=float(density[number]),
                quadrant=quadrant[number],
                documents=documents,
                occurrences=int(co.weights[members].sum()),
            )
        )
    clustered = {str(co.keywords[i]): int(m) for i, m in enumerate(membership.tolist()) if m >= 0}
    return ThematicMap(filters, co.kinds, co.documents, len(co.keywords), themes, clustered)


def thematic_map(
    store: GraphStore,
    filters: NetworkFilters | None = None,
    kinds: Sequence[str] | None = None,
    *,
    resolution: float = 1.0,
    seed: int = 0,
) -> ThematicMap:
    """The thematic map of the store's keywords under ``filters`` (default: every year, links of 2+
    documents, the :data:`DEFAULT_TOP` most frequent keywords)."""
    filters = filters or NetworkFilters(top=DEFAULT_TOP)
    co = cooccurrence(read_keyword_uses(store), filters, kinds)
    rows = store.query("keyword_nodes", {"ids": [str(k) for k in co.keywords]}) if len(co.keywords) else []
    by_id = {row["id"]: row["name"] for row in rows}
    names = [by_id.get(str(k)) or str(k) for k in co.keywords]
    return thematic_map_of(co, names, filters, resolution=resolution, seed=seed)


def compute_thematic_map(
    store: GraphStore,
    filters: NetworkFilters | None = None,
    kinds: Sequence[str] | None = None,
    *,
    resolution: float = 1.0,
    seed: int = 0,
) -> tuple[ThematicMap, int]:
    """``citegraph compute thematic-map``: the map, written onto every Keyword (``cluster``, ``cluster_label``,
    ``quadrant``; null for a keyword outside it, so a recomputation replaces old values). Returns the map and
    the keywords written."""
    themes = thematic_map(store, filters, kinds, resolution=resolution, seed=seed)
    keys = [row["key"] for row in store.query("every_key", {}, identifiers={"LABEL": "Keyword", "KEY": "id"})]
    keys.sort()
    by_cluster = {t.cluster: t for t in themes.themes}
    clusters = [themes.membership.get(key) for key in keys]
    frame = pd.DataFrame(
        {
            "id": keys,
            "cluster": pd.array(clusters, dtype="Int64"),
            "cluster_label": [by_cluster[c].label if c is not None else None for c in clusters],
            "quadrant": [by_cluster[c].quadrant if c is not None else None for c in clusters],
        }
    )
    written = store.write_node_properties("Keyword", "id", frame) if keys else 0
    return themes, written


def theme_rows(themes: ThematicMap) -> list[dict[str, object]]:
    """One row per theme: cluster, label, quadrant, centrality, density, documents, occurrences, keywords."""
    return [
        {
            "cluster": t.cluster,
            "label": t.label,
            "quadrant": t.quadrant,
            "centrality": round(t.centrality, 6),
            "density": round(t.density, 6),
            "documents": t.documents,
            "occurrences": t.occurrences,
            "keywords": "; ".join(t.keywords),
        }
        for t in themes.themes
    ]


def write_thematic_map(themes: ThematicMap, path: Path) -> Path:
    """The map as CSV (one row per theme, keywords ``; ``-separated) or JSON (the themes and the filters),
    by ``path``'s suffix."""
    path = Path(path)
    kind = path.suffix.lower().lstrip(".")
    if kind not in THEMATIC_FORMATS:
        raise ConfigError(f"{path}: write the thematic map to a .csv or .json file, not .{kind or '(none)'}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "csv":
        rows = theme_rows(themes)
        with path.open("w", encoding="utf-8", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]) if rows else ["cluster"])
            writer.writeheader()
            writer.writerows(rows)
    else:
        document = {
            "filters": {k: (v.value if hasattr(v, "value") else v) for k, v in asdict(themes.filters).items()},
            "kinds": list(themes.kinds),
            "documents": themes.documents,
            "keywords": themes.keywords,
            "themes": [
                {**asdict(t), "keywords": list(t.keywords), "keyword_ids": list(t.keyword_ids)} for t in themes.themes
            ],
        }
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


__all__ = [
    "BASIC",
    "DEFAULT_TOP",
    "EMERGING",
    "KEYWORD_PROPERTIES",
    "MOTOR",
    "NICHE",
    "QUADRANTS",
    "THEMATIC_FORMATS",
    "ThematicMap",
    "Theme",
    "callon",
    "compute_thematic_map",
    "equivalence",
    "quadrants",
    "thematic_map",
    "thematic_map_of",
    "theme_rows",
    "write_thematic_map",
]
