"""Typed Arrow tables from canonical pandas frames: one conversion, used by every bulk write.

LadybugDB's COPY and LOAD FROM read Arrow directly. Building the Arrow columns with the schema's
types (rather than letting pandas guess) keeps nullable integers, missing vectors and empty
lists exact.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pyarrow as pa

from graph.schema import Kind, Property

_SCALAR_TYPES = {
    Kind.STRING: pa.string(),
    Kind.INT: pa.int64(),
    Kind.FLOAT: pa.float64(),
    Kind.BOOL: pa.bool_(),
    Kind.STRING_LIST: pa.list_(pa.string()),
    Kind.FLOAT_LIST: pa.list_(pa.float64()),
}


def arrow_type(prop: Property) -> pa.DataType:
    if prop.kind is Kind.VECTOR32:
        return pa.list_(pa.float32(), prop.size)
    if prop.kind is Kind.VECTOR64:
        return pa.list_(pa.float64(), prop.size)
    return _SCALAR_TYPES[prop.kind]


def _is_missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def arrow_strings(values: pd.Series) -> pa.Array | pa.ChunkedArray | None:
    """The Arrow array behind a pyarrow-backed string column (pandas 3's default ``str``), else ``None``.

    Such a column already holds Arrow strings with nulls for missing values, so it needs no trip
    through Python objects (at 10M rows that trip costs seconds).
    """
    dtype = values.dtype
    if isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow":
        return pa.array(values.array)
    if isinstance(dtype, pd.ArrowDtype) and dtype.pyarrow_dtype in (pa.string(), pa.large_string()):
        return pa.array(values.array)
    return None


def null_column(kind: pa.DataType, length: int) -> pa.Array:
    """``pa.nulls(length, type=kind)``, without materialising the values of fixed-size lists.

    ``pa.nulls`` fills a fixed-size list's child array with ``length * size`` values: for 1M
    papers' absent 384-float embeddings that is 1.5 GiB and about 3 s per column. Here the child
    values are ``np.zeros`` (calloc: pages the kernel maps only when written, and nothing writes
    them) behind an all-null validity bitmap; the array is the same, null in every slot.
    """
    if pa.types.is_fixed_size_list(kind) and length:
        child_length = length * kind.list_size
        values = np.zeros(child_length, dtype=kind.value_type.to_pandas_dtype())
        child = pa.Array.from_buffers(kind.value_type, child_length, [None, pa.py_buffer(values)])
        validity = pa.py_buffer(np.zeros((length + 7) // 8, dtype=np.uint8))
        return pa.Array.from_buffers(kind, length, [validity], null_count=length, children=[child])
    return pa.nulls(length, type=kind)


def arrow_column(values: pd.Series | None, prop: Property, length: int) -> pa.Array:
    """One column as ``prop``'s Arrow type; ``None`` gives a column of nulls."""
    kind = arrow_type(prop)
    if values is None:
        return null_column(kind, length)
    if prop.kind in (Kind.INT, Kind.FLOAT):
        numeric = (
            pd.to_numeric(values, errors="coerce")
            if not pd.api.types.is_bool_dtype(values)
            else values.astype("float64")
        )
        array = numeric.to_numpy(dtype="float64", na_value=np.nan)
        mask = np.isnan(array)
        if prop.kind is Kind.INT:
            return pa.array(np.where(mask, 0, array).astype(np.int64), type=kind, mask=mask)
        return pa.array(array, type=kind, mask=mask)
    if prop.kind is Kind.STRING:
        if values.dtype == object:
            return pa.array(values.to_numpy(), type=kind, from_pandas=True)
        strings = arrow_strings(values)
        if strings is not None:
            if isinstance(strings, pa.ChunkedArray):
                strings = strings.combine_chunks()
            try:
                return strings.cast(kind)  # large_string -> string: the offsets narrow, the text is shared
            except pa.ArrowInvalid:  # over 2 GiB of text: too much for 32-bit offsets in one array
                pass
        return pa.array(values.astype(object).where(values.notna(), None).to_numpy(), type=kind)
    if prop.kind is Kind.BOOL:
        return pa.array([None if _is_missing(v) else bool(v) for v in values.to_numpy()], type=kind)
    if prop.is_vector:
        dtype = np.float32 if prop.kind is Kind.VECTOR32 else np.float64
        raw = values.to_numpy()
        present = np.fromiter((not _is_missing(v) for v in raw), dtype=bool, count=len(raw))
        if present.all() and len(raw):
            flat = np.stack([np.asarray(v, dtype=dtype) for v in raw]).reshape(-1)  # (n * size,)
            return pa.FixedSizeListArray.from_arrays(pa.array(flat), prop.size)
        return pa.array([np.asarray(v, dtype=dtype) if ok else None for v, ok in zip(raw, present)], type=kind)
    lists = _arrow_lists(values, kind)
    if lists is not None:
        return lists
    return pa.array([None if _is_missing(v) else list(v) for v in values.to_numpy()], type=kind)


def _arrow_lists(values: pd.Series, kind: pa.DataType) -> pa.Array | None:
    """The Arrow list array behind a ``pd.ArrowDtype`` list column, cast to ``kind``; else ``None``.

    Computed write-backs (``cocite_partners``: 1M papers × 32 ids) build such columns from offsets,
    so they reach COPY / LOAD FROM without a Python list per row.
    """
    if not isinstance(values.dtype, pd.ArrowDtype):
        return None
    source = values.dtype.pyarrow_dtype
    if not (pa.types.is_list(source) or pa.types.is_large_list(source)):
        return None
    array = pa.array(values.array)
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return array.cast(kind)


def arrow_table(frame: pd.DataFrame, columns: list[tuple[str, Property]]) -> pa.Table:
    """A table with exactly ``columns`` (frame column, property) in that order; absent ones are nulls.

    Arrow column names are the property names, so a frame column can be stored under another name.
    """
    length = len(frame)
    arrays = [arrow_column(frame[name] if name in frame.columns else None, prop, length) for name, prop in columns]
    return pa.Table.from_arrays(arrays, names=[prop.name for _, prop in columns])


__all__ = ["arrow_column", "arrow_strings", "arrow_table", "arrow_type", "null_column"]
