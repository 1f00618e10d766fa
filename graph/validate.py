"""Validation of canonical tables against the schema, before anything is written.

Every check is vectorised (pandas/numpy over whole columns) because the same path loads 10M-edge
citation graphs: a per-row Python loop would cost more than the bulk load itself. A record that
fails any check is rejected whole, with its origin (``_origin`` column, else ``<table> record N``)
and a reason that names the field, the value and what was expected.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from graph.arrow import arrow_strings
from graph.errors import Reject, SchemaError, ValidationError
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN, Kind, NodeType, Property, RelType

# has_nodes(label, keys) -> boolean mask: which keys exist in the store already.
HasNodes = Callable[[str, pd.Series], np.ndarray]

# The longest text a field may hold, in characters, per label and property; a longer value is rejected with
# its origin. Why limits at all: a title or a name of megabytes is no title or name but a field that ran into
# the next (a quote missing in a CSV, a tag lost in a tagged export, a damaged file); stored as it is, it
# swells the store, the embedding cache and the index, and every table and page that shows it. Each limit sits
# far above the longest real value, so a real record never meets it. Every importer's tables pass here, so this
# is the one definition for all of them.
FIELD_LIMITS: dict[str, dict[str, int]] = {
    "Paper": {
        # the longest real titles (with subtitles) run to a few hundred characters, rarely past 1,000
        "title": 4_000,
        # an abstract is ~250 words (~2,000 characters); long structured ones stay under ~20,000
        "abstract": 100_000,
        # one cited-reference string (a WoS CR entry, a bibliography line): ~100-400 characters
        "reference": 4_000,
        # a journal's or proceedings' full name: well under 300 characters
        "venue": 1_000,
        "venue_abbrev": 1_000,
    },
    # a person's name, or a consortium's: the longest group names run to a few hundred characters
    "Author": {"name": 1_000},
}


def preview(value: object) -> str:
    """A value as shown in a reject reason: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _origins(frame: pd.DataFrame, table: str, positions: np.ndarray) -> list[str]:
    if ORIGIN_COLUMN in frame.columns:
        values = frame[ORIGIN_COLUMN].to_numpy()[positions]
        return [str(v) if isinstance(v, str) and v else f"{table} record {p}" for v, p in zip(values, positions)]
    return [f"{table} record {p}" for p in positions]


class _Collector:
    """Accumulates per-row rejection reasons for one table (first reason per row wins)."""

    def __init__(self, frame: pd.DataFrame, table: str) -> None:
        self.frame = frame
        self.table = table
        self.bad = np.zeros(len(frame), dtype=bool)
        self.reasons: dict[int, str] = {}

    def add(self, mask: np.ndarray, reason: Callable[[int], str]) -> None:
        fresh = np.flatnonzero(mask & ~self.bad)
        for position in fresh:
            self.reasons[int(position)] = reason(int(position))
        self.bad |= mask

    def rejects(self) -> list[Reject]:
        positions = np.array(sorted(self.reasons), dtype=np.int64)
        origins = _origins(self.frame, self.table, positions)
        return [Reject(self.table, o, self.reasons[int(p)]) for o, p in zip(origins, positions)]


class _Values:
    """A column's values as a NumPy array, built on first use.

    Reasons need single values of rejected rows only; converting a pyarrow-backed string column
    to a NumPy object array up front costs about 0.2 s per million rows, mostly for nothing.
    """

    def __init__(self, values: pd.Series) -> None:
        self._values = values
        self._array: np.ndarray | None = None

    @property
    def array(self) -> np.ndarray:
        if self._array is None:
            self._array = self._values.to_numpy()
        return self._array

    def __getitem__(self, position: int | np.integer) -> object:
        return self.array[position]

    def __len__(self) -> int:
        return len(self._values)


def _check_key_column(values: pd.Series, name: str, out: _Collector) -> None:
    raw = _Values(values)
    if values.dtype == object:
        is_text = np.fromiter((isinstance(v, str) and v != "" for v in raw.array), dtype=bool, count=len(raw))
    else:
        is_text = (
            np.zeros(len(raw), dtype=bool)
            if not pd.api.types.is_string_dtype(values)
            else (values.notna() & (values != "")).to_numpy()
        )
    out.add(~is_text, lambda p: f"`{name}` is {preview(raw[p])}, expected a non-empty string")


def _check_length(values: pd.Series, prop: Property, label: str, limit: int, out: _Collector) -> None:
    """Reject strings longer than ``limit`` characters (:data:`FIELD_LIMITS`), naming the length and the limit."""
    raw = _Values(values)
    if values.dtype == object:
        lengths = np.fromiter((len(v) if isinstance(v, str) else 0 for v in raw.array), dtype=np.int64, count=len(raw))
    elif pd.api.types.is_string_dtype(values):
        lengths = values.str.len().fillna(0).to_numpy(dtype=np.int64)
    else:
        return  # not text: the type check has rejected it

    def reason(p: int) -> str:
        return (
            f"`{prop.name}` is {lengths[p]:,} characters long ({preview(str(raw[p])[:80])}), over the limit of {limit:,} for "
            f"{label}.{prop.name}: most likely a field that ran into the next or a damaged record; fix the record in "
            "the export, or load the rest with --on-error skip"
        )

    out.add(lengths > limit, reason)


def _check_property(values: pd.Series, prop: Property, out: _Collector) -> None:
    """Reject values that cannot be stored as ``prop.kind``; nulls are always allowed."""
    raw = _Values(values)
    present = (
        values.notna().to_numpy()
        if not prop.is_list
        else np.fromiter(
            (v is not None and not (isinstance(v, float) and math.isnan(v)) for v in raw.array),
            dtype=bool,
            count=len(raw),
        )
    )
    if not present.any():
        return
    kind = prop.kind
    if kind is Kind.STRING:
        if values.dtype == object:
            ok = np.fromiter((isinstance(v, str) for v in raw.array), dtype=bool, count=len(raw))
            out.add(present & ~ok, lambda p: f"`{prop.name}` is {preview(raw[p])}, expected a string")
        elif not pd.api.types.is_string_dtype(values):
            out.add(present, lambda p: f"`{prop.name}` is {preview(raw[p])}, expected a string")
    elif kind in (Kind.INT, Kind.FLOAT):
        if pd.api.types.is_integer_dtype(values):
            return  # every present value of an integer column is an integer (and a number)
        if pd.api.types.is_bool_dtype(values):
            numeric = values.astype("float64")
        else:
            numeric = pd.to_numeric(values, errors="coerce")
        number = numeric.to_numpy(dtype="float64", na_value=np.nan)
        bad = present & np.isnan(number)
        expected = "an integer" if kind is Kind.INT else "a number"
        if kind is Kind.INT:
            with np.errstate(invalid="ignore"):
                bad |= present & ~np.isnan(number) & (np.mod(number, 1) != 0)
        out.add(bad, lambda p: f"`{prop.name}` is {preview(raw[p])}, expected {expected}")
    elif kind is Kind.BOOL:
        if not pd.api.types.is_bool_dtype(values):
            ok = np.fromiter((isinstance(v, (bool, np.bool_)) for v in raw.array), dtype=bool, count=len(raw))
            out.add(present & ~ok, lambda p: f"`{prop.name}` is {preview(raw[p])}, expected true or false")
    elif prop.is_vector:
        size = prop.size
        ok = np.zeros(len(raw), dtype=bool)
        positions = np.flatnonzero(present)
        try:  # fast path: a column of equal-length numeric vectors stacks into one matrix
            matrix = np.stack([np.asarray(raw[p], dtype=np.float64) for p in positions])
            if matrix.ndim == 2 and matrix.shape[1] == size:
                ok[positions] = np.isfinite(matrix).all(axis=1)
            else:
                raise ValueError("ragged or wrong size")
        except (ValueError, TypeError):
            for p in positions:
                try:
                    vector = np.asarray(raw[p], dtype=np.float64)
                    ok[p] = vector.shape == (size,) and bool(np.isfinite(vector).all())
                except (ValueError, TypeError):
                    ok[p] = False
        out.add(present & ~ok, lambda p: f"`{prop.name}` must be {size} finite numbers, got {preview(raw[p])}")
    else:  # STRING_LIST, FLOAT_LIST
        element = str if kind is Kind.STRING_LIST else (int, float, np.integer, np.floating)
        ok = np.fromiter(
            (
                isinstance(v, (list, tuple, np.ndarray))
                and all(isinstance(x, element) and not isinstance(x, bool) for x in v)
                for v in raw.array
            ),
            dtype=bool,
            count=len(raw),
        )
        what = "strings" if kind is Kind.STRING_LIST else "numbers"
        out.add(present & ~ok, lambda p: f"`{prop.name}` is {preview(raw[p])}, expected a list of {what}")


def _property_columns(frame: pd.DataFrame, owner: NodeType | RelType, fixed: set[str]) -> list[Property]:
    names = [c for c in frame.columns if c not in fixed and c != ORIGIN_COLUMN]
    label = owner.label if isinstance(owner, NodeType) else owner.type
    try:
        return [owner.prop(name) for name in names]
    except SchemaError as exc:
        raise SchemaError(f"table {label}: {exc}; the loader produced a column the data model does not have") from None


def validate_nodes(frame: pd.DataFrame, node: NodeType) -> tuple[pd.DataFrame, list[Reject]]:
    """Clean rows of a node table and the rejects (missing/duplicate key, wrong types)."""
    if node.key not in frame.columns:
        raise SchemaError(f"table {node.label} has no `{node.key}` column; every {node.label} needs its key")
    out = _Collector(frame, node.label)
    _check_key_column(frame[node.key], node.key, out)
    limits = FIELD_LIMITS.get(node.label, {})
    for prop in _property_columns(frame, node, {node.key}):
        _check_property(frame[prop.name], prop, out)
        if prop.name in limits:
            _check_length(frame[prop.name], prop, node.label, limits[prop.name], out)
    _reject_duplicates(frame, [node.key], out, f"duplicate {node.label} `{node.key}`")
    return _clean_rows(frame, out.bad), out.rejects()


def _clean_rows(frame: pd.DataFrame, bad: np.ndarray) -> pd.DataFrame:
    """``frame.loc[~bad]``; when nothing is bad, a shallow copy (copy-on-write) instead of a 10M-row take."""
    return frame.copy(deep=False) if not bad.any() else frame.loc[~bad]


def _reject_duplicates(
    frame: pd.DataFrame, columns: list[str], out: _Collector, what: str, codes: np.ndarray | None = None
) -> None:
    keyed = pd.Series(codes) if codes is not None else (frame[columns[0]] if len(columns) == 1 else frame[columns])
    valid = ~out.bad  # duplicates only among otherwise valid rows: the first valid one is kept
    dup = np.zeros(len(frame), dtype=bool)
    dup[valid] = keyed[valid].duplicated(keep="first").to_numpy()
    if not dup.any():
        return
    first_origin: dict[object, str] = {}
    subset = keyed[valid]
    firsts = subset[~subset.duplicated(keep="first")]
    dup_keys = set(
        map(_hashable, keyed[dup].itertuples(index=False) if isinstance(keyed, pd.DataFrame) else keyed[dup])
    )
    for position, value in zip(
        firsts.index, firsts.itertuples(index=False) if isinstance(firsts, pd.DataFrame) else firsts
    ):
        value = _hashable(value)
        if value in dup_keys:
            first_origin[value] = _origins(frame, out.table, np.array([position]))[0]
    values = frame[columns]

    def reason(p: int) -> str:
        key = _hashable(keyed.iloc[p] if not isinstance(keyed, pd.DataFrame) else tuple(keyed.iloc[p]))
        shown = ", ".join(preview(v) for v in values.iloc[p])
        return f"{what} ({shown}) already at {first_origin.get(key, 'an earlier record')}"

    out.add(dup, reason)


def _hashable(value: object) -> object:
    return tuple(value) if isinstance(value, (tuple, list)) else value


def validate_rels(
    frame: pd.DataFrame,
    rel: RelType,
    batch_keys: dict[str, pd.Index],
    has_nodes: HasNodes,
) -> tuple[pd.DataFrame, list[Reject]]:
    """Clean rows of a relationship table and the rejects.

    Checks: endpoints present and non-empty, every endpoint a node of the right label in this load
    (``batch_keys``) or already in the store (``has_nodes``), property types, and duplicates of the
    edge identity ``(source, target, *rel.identity)``.
    """
    for column in (SOURCE_COLUMN, TARGET_COLUMN):
        if column not in frame.columns:
            raise SchemaError(f"table {rel.type} has no `{column}` column; relationship tables need source and target")
    frame = frame.reset_index(drop=True)
    out = _Collector(frame, rel.type)
    _check_key_column(frame[SOURCE_COLUMN], SOURCE_COLUMN, out)
    _check_key_column(frame[TARGET_COLUMN], TARGET_COLUMN, out)
    identity = list(rel.identity)
    for name in identity:  # identity properties are part of the edge key: null means "" (none given)
        if name not in frame.columns:
            frame[name] = ""
        else:
            frame[name] = frame[name].where(frame[name].notna(), "")
    for prop in _property_columns(frame, rel, {SOURCE_COLUMN, TARGET_COLUMN}):
        _check_property(frame[prop.name], prop, out)

    ends = ((SOURCE_COLUMN, rel.source), (TARGET_COLUMN, rel.target))
    # Arrow's hash lookups release the GIL: the two endpoint columns are looked up on two cores
    # (10M edges into 1M papers: ~2.8 s one after the other). Store lookups stay on this thread.
    with ThreadPoolExecutor(max_workers=2) as pool:
        in_batch = list(pool.map(lambda end: _batch_positions(frame[end[0]], batch_keys.get(end[1])), ends))
    codes = []
    for (column, label), positions in zip(ends, in_batch):
        code = _endpoint_codes(positions, frame[column], label, batch_keys.get(label), has_nodes, ~out.bad)
        out.add(code < 0, _dangling_reason(column, label, _Values(frame[column])))
        codes.append(code)
    if identity:
        _reject_duplicates(frame, list(rel.key_columns), out, f"duplicate {rel.type}")
    else:
        combined = codes[0].astype(np.int64) * (int(max(codes[1].max(initial=0), 0)) + 1) + codes[1]
        _reject_duplicates(frame, list(rel.key_columns), out, f"duplicate {rel.type}", codes=combined)
    return _clean_rows(frame, out.bad), out.rejects()


def _dangling_reason(column: str, label: str, raw: _Values) -> Callable[[int], str]:
    def reason(position: int) -> str:
        return f"`{column}` {label} {preview(raw[position])} is neither in this load nor in the store"

    return reason


def _batch_positions(keys: pd.Series, batch: pd.Index | None) -> np.ndarray:
    """Each key's position among this load's nodes of the endpoint's label; -1 where absent."""
    if batch is None or not len(batch):
        return np.full(len(keys), -1, dtype=np.int64)
    return _positions(batch, keys).astype(np.int64)


def _endpoint_codes(
    positions: np.ndarray,
    keys: pd.Series,
    label: str,
    batch: pd.Index | None,
    has_nodes: HasNodes,
    checkable: np.ndarray,
) -> np.ndarray:
    """An integer code per endpoint (equal keys, equal codes); -1 where the node exists nowhere.

    ``positions`` are the keys' places in this load (:func:`_batch_positions`); keys not found
    there are looked up in the store.
    """
    codes = positions.copy()
    unresolved = (codes < 0) & checkable
    if unresolved.any():
        candidates = keys[unresolved]
        in_store = has_nodes(label, candidates)
        offset = len(batch) if batch is not None else 0
        store_codes, _ = pd.factorize(candidates[in_store])
        positions = np.flatnonzero(unresolved)[in_store]
        codes[positions] = store_codes + offset
    return codes


def _positions(batch: pd.Index, keys: pd.Series) -> np.ndarray:
    """``batch.get_indexer(keys)``: each key's position in ``batch``, -1 where absent.

    For pyarrow-backed string keys (pandas 3's default ``str``) Arrow's hash lookup gives the same
    positions without turning both sides into Python strings (10M keys into 1M: ~1.6 s, not ~7 s).
    """
    if batch.is_unique:  # get_indexer refuses a non-unique index; keep that error
        needles, haystack = arrow_strings(keys), arrow_strings(batch.to_series())
        if needles is not None and haystack is not None:
            if isinstance(haystack, pa.ChunkedArray):
                haystack = haystack.combine_chunks()
            found = pc.index_in(needles.cast(pa.large_string()), value_set=haystack.cast(pa.large_string()))
            return found.fill_null(-1).to_numpy().astype(np.int64)
    return batch.get_indexer(keys)


def first_reject(rejects: list[Reject]) -> str:
    """The first reject as ``origin: reason``, for an error message that stands for all of them."""
    return f"{rejects[0].origin}: {rejects[0].reason}"


def require_valid_rels(frame: pd.DataFrame, rel: RelType, has_nodes: HasNodes) -> pd.DataFrame:
    """The frame's edges if every one is valid (endpoints looked up with ``has_nodes``), else :class:`ValidationError`."""
    clean, rejects = validate_rels(frame, rel, {}, has_nodes)
    if rejects:
        raise ValidationError(
            f"{rel.type}: {len(rejects)} of {len(frame)} edges rejected; first: {first_reject(rejects)}", rejects
        )
    return clean


__all__ = [
    "FIELD_LIMITS",
    "HasNodes",
    "first_reject",
    "preview",
    "require_valid_rels",
    "validate_nodes",
    "validate_rels",
]
