"""Values no step ever writes: how a damaged store is told apart from a sound one.

LadybugDB checksums its write-ahead log (a torn or damaged log is refused on open, see
:mod:`graph.recovery`) but not the pages of the store file: a page damaged on disk is read back as
whatever bytes it holds now. A damaged number then travels on silently (a ``sum(c.jaccard)`` of NaN).
Every computed property has a range its step guarantees, so values outside it are impossible in a
sound store:

=========================================  =====================================================
property                                   always
=========================================  =====================================================
every float, float list and vector         finite (no NaN, no infinity)
``CO_CITED.count``                         >= 1 (a pair is stored because it was co-cited)
``CO_CITED.sentence_count``                >= 0
``CO_CITED.cosine, jaccard, inclusion``    in [0, 1], and jaccard <= cosine <= inclusion
``CO_CITED.association``                   >= 0
``CO_CITED`` endpoints                     source id < target id (stored once per pair)
``Paper.n_cited``                          >= 0
``Paper.cocite_probs``                     each in [0, 1], summing to at most 1, as long as ``cocite_partners``
``Paper.cocite_tail, negative_weight``     in [0, 1]
``Paper/Sentence.embedding``               unit length (the encoder L2-normalises)
``Paper.taxonomy``, ``*.fused``            length at most 1 (L2-normalised, or zero)
``*.poincare``                             inside the unit ball (length < 1)
``IN_CATEGORY.score``, ``MAPS_TO.score``   in [-1, 1] (1 where given, a cosine where inferred)
``LINKS_TO.score``                         in [0, 1] (a probability)
``CITES.n_contexts``                       >= 0
``WROTE.position``, ``AcmClass.level``     >= 1
=========================================  =====================================================

and every key of a label is read once (as many keys as ``count(*)`` says, none twice).

Two guards use these facts. Every named statement's result is checked for non-finite floats, and its
text for bytes that are not UTF-8, as it is read (:func:`require_sound`, called by both backends' ``query``
and ``query_arrow``): a damaged value stops the reader with :class:`~graph.errors.StoreCorruptError` instead
of reaching a client or a computation (or, for text, a decoding error with a traceback: the engine hands a
damaged string page over as it finds it). And ``citegraph check`` (:func:`graph.check.check_store`) scans
every property of the table above and reports each impossible value, with what to do (:mod:`graph.check`).
Writes are held to the same finiteness (:func:`non_finite_rows`, called by ``write_node_properties`` and
``replace_edges``), so no step can put a NaN there itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from graph.errors import StoreCorruptError
from graph.schema import Kind, NodeType, RelType

UNIT_TOLERANCE = 1e-3  # |‖v‖ - 1| of an encoder vector (float32, L2-normalised) stays far below this

# (owner, property) -> (low, high), inclusive, None: unbounded; a list property's every element
RANGES: dict[tuple[str, str], tuple[float | None, float | None]] = {
    ("CO_CITED", "count"): (1, None),
    ("CO_CITED", "sentence_count"): (0, None),
    ("CO_CITED", "association"): (0, None),
    ("CO_CITED", "cosine"): (0, 1),
    ("CO_CITED", "jaccard"): (0, 1),
    ("CO_CITED", "inclusion"): (0, 1),
    ("Paper", "n_cited"): (0, None),
    ("Paper", "cocite_probs"): (0, 1),
    ("Paper", "cocite_tail"): (0, 1),
    ("Paper", "negative_weight"): (0, 1),
    ("IN_CATEGORY", "score"): (-1, 1),
    ("MAPS_TO", "score"): (-1, 1),
    ("LINKS_TO", "score"): (0, 1),
    ("CITES", "n_contexts"): (0, None),
    ("WROTE", "position"): (1, None),
    ("AcmClass", "level"): (1, None),
}
# vector property name -> (shortest, longest) Euclidean length
LENGTHS: dict[str, tuple[float, float]] = {
    "embedding": (1 - UNIT_TOLERANCE, 1 + UNIT_TOLERANCE),
    "taxonomy": (0.0, 1 + UNIT_TOLERANCE),
    "fused": (0.0, 1 + UNIT_TOLERANCE),
    "poincare": (0.0, 1.0 - 1e-12),
}
# what rewrites a computed property: the advice of a finding
STEPS: dict[str, str] = {
    "CO_CITED": "compute cocitation",
    "n_cited": "compute cocitation",
    "cocite_probs": "compute cocitation",
    "cocite_partners": "compute cocitation",
    "cocite_tail": "compute cocitation",
    "negative_weight": "compute cocitation",
    "embedding": "compute embeddings --force",
    "taxonomy": "compute taxonomy",
    "fused": "compute taxonomy",
    "IN_CATEGORY": "compute taxonomy",
    "MAPS_TO": "compute taxonomy",
    "poincare": "compute hyperbolic",
    "LINKS_TO": "compute linkage",
}


def damage_advice(where: str) -> str:
    """What to do about a damaged store ``where`` (its description)."""
    return (
        f"no citegraph step writes such a value, so {where}'s file is damaged (a bad disk, a copy cut short, "
        "a file edited by hand): restore a copy of the store, or rebuild it (`make build`); `citegraph check` "
        "lists every impossible value and the step that writes it (`citegraph recover` repairs only what a "
        "killed command left, not damaged pages)"
    )


# reading: every result checked ---------------------------------------------------------------------
def non_finite_count(column: pa.ChunkedArray | pa.Array) -> int:
    """How many floats of ``column`` (a float column, or lists/vectors of floats) are NaN or infinite; nulls are not."""
    kind = column.type
    while pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_fixed_size_list(kind):
        column = pc.list_flatten(column)
        kind = kind.value_type
    if not pa.types.is_floating(kind) or len(column) == 0:
        return 0
    bad = pc.sum(pc.invert(pc.is_finite(column))).as_py()
    return int(bad or 0)


def require_valid(table: pa.Table, *, store: str, what: str) -> pa.Table:
    """``table`` as it is, or :class:`StoreCorruptError` naming the first column Arrow's full validation refuses:
    text that is not UTF-8 (every string is checked), offsets out of range."""
    for name in table.column_names:
        try:
            table.column(name).validate(full=True)
        except pa.ArrowInvalid as exc:
            raise StoreCorruptError(
                f"{store}: `{what}` read values of `{name}` that are not valid ({exc}); " + damage_advice(store)
            ) from None
    return table


def require_sound(table: pa.Table, *, store: str, what: str) -> pa.Table:
    """``table`` as it is, or :class:`StoreCorruptError` naming the first column that is not valid
    (:func:`require_valid`) or holds a NaN or an infinity."""
    require_valid(table, store=store, what=what)
    for name in table.column_names:
        bad = non_finite_count(table.column(name))
        if bad:
            raise StoreCorruptError(
                f"{store}: `{what}` read {bad} value(s) of `{name}` that are not finite (NaN or infinity); "
                + damage_advice(store)
            )
    return table


def non_finite_rows(frame: pd.DataFrame, owner: NodeType | RelType) -> dict[str, int]:
    """Per float (list, vector) property of ``owner`` in ``frame``: how many rows hold a NaN inside a list or an
    infinity (a NaN in a plain float column means null there, as everywhere in pandas)."""
    out: dict[str, int] = {}
    for prop in owner.properties:
        if prop.name not in frame.columns or prop.kind not in (Kind.FLOAT, Kind.FLOAT_LIST, *VECTOR_KINDS):
            continue
        values = frame[prop.name]
        if prop.kind is Kind.FLOAT:
            numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
            bad = int(np.isinf(numeric).sum())
        elif isinstance(values.dtype, pd.ArrowDtype):  # lists built from offsets (cocite_probs): counted in Arrow
            bad = non_finite_count(pa.array(values.array))
        else:
            bad = _non_finite_lists(values.to_numpy())
        if bad:
            out[prop.name] = bad
    return out


VECTOR_KINDS = (Kind.VECTOR32, Kind.VECTOR64)
_CHUNK = 10_000  # rows stacked at once when checking vectors


def _non_finite_lists(values: np.ndarray) -> int:
    """Rows of an object column of lists or arrays holding a NaN or an infinity (None rows are nulls)."""
    bad = 0
    for start in range(0, len(values), _CHUNK):
        present = [v for v in values[start : start + _CHUNK] if _is_list(v)]
        try:
            stacked = np.asarray(present, dtype=np.float64)
        except ValueError:  # lists of several lengths
            bad += sum(1 for v in present if not np.isfinite(np.asarray(v, dtype=np.float64)).all())
            continue
        if stacked.size:
            bad += int((~np.isfinite(stacked.reshape(len(present), -1))).any(axis=1).sum())
    return bad


def _is_list(value: object) -> bool:
    return value is not None and not isinstance(value, (str, bytes, float, int)) and hasattr(value, "__len__")


__all__ = [
    "LENGTHS",
    "RANGES",
    "STEPS",
    "VECTOR_KINDS",
    "damage_advice",
    "non_finite_count",
    "non_finite_rows",
    "require_sound",
    "require_valid",
]
