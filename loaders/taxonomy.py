"""arXiv categories and the ACM Computing Classification System -> ArxivCategory, AcmClass, BROADER, MAPS_TO.

Files (under ``taxonomy/``), and what each becomes:

* ``arxiv_taxonomy.json`` (``categories``: code -> ``full_name``, ``description``):
  ``ArxivCategory {code, name, description}``, every category of the file (185, 40 in cs);
* ``acm_ccs1998.txt``: one line per class, ``I.2.10 Vision and Scene Understanding`` (top
  classes ``I. Computing Methodologies``), followed by the class's subject descriptors (lines
  without a code). The tree is in the codes, not in indentation: the parent of ``I.2.10`` is
  ``I.2``. Each coded line becomes ``AcmClass {id="1998:<code>", code, name, scheme="1998",
  level, description}`` with ``level`` = number of code parts (``I`` 1, ``I.2`` 2, ``I.2.10`` 3) and
  ``description`` the descriptors joined by ``"; "``; each non-top class has one
  ``(child)-[:BROADER]->(parent)``. A trailing cross-reference such as ``(D.3.2)`` is not part of
  the name and is dropped (the data model has no "related" edge);
* ``acm_ccs2012.xml`` (SKOS/RDF): ``AcmClass {id="2012:<rdf:about>", code, name=prefLabel,
  scheme="2012", level}`` plus ``BROADER`` from ``skos:broader``. The file lists tree positions
  (``rdf:about`` is the path of concept numbers, ``10010147.10010178.10010179``); a concept that
  sits under two parents appears twice. ``code`` is the concept number (the last part), so all
  positions of one concept share it. ``level`` is the depth (top concepts 1);
* ``MAPS_TO {score=1.0, inferred=false}`` from an arXiv category to each ACM 1998 class its
  description names ("Roughly includes material in ACM Subject Classes I.2.10, I.4, and I.5"):
  see :func:`named_acm_codes`. A named code that is not in the 1998 tree is a reject naming the
  category and the code.

``arxiv_acm_mapping_symtax.csv`` (SymTax's hand mapping) is not loaded; :func:`compare_mappings`
measures how far the derived mapping agrees with it.
"""

from __future__ import annotations

import csv
import json
import logging
import re
import xml.etree.ElementTree as ET
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import pandas as pd

from graph.errors import IngestError, Reject
from graph.ingest import GraphBatch
from graph.schema import ORIGIN_COLUMN, SOURCE_COLUMN, TARGET_COLUMN
from loaders._common import merge_batches, nullable_ints, origin, require_file, table

log = logging.getLogger(__name__)

SOURCE = "taxonomy"
ARXIV_FILE = "arxiv_taxonomy.json"
ACM1998_FILE = "acm_ccs1998.txt"
ACM2012_FILE = "acm_ccs2012.xml"
SYMTAX_FILE = "arxiv_acm_mapping_symtax.csv"
SCHEME_1998 = "1998"
SCHEME_2012 = "2012"

# --- ACM CCS 1998 -------------------------------------------------------------------------------
_PART = r"(?:\d+|m)"  # a code part below the top letter: a number, or "m" for Miscellaneous
_CODE = rf"[A-Z](?:\.{_PART})+"  # a dotted code, I.2 or I.2.10 (top classes are one letter)
# "I. Computing Methodologies" (a top class needs its dot) or "I.2.10 Vision and ..." (then a space).
_CLASS_LINE = re.compile(rf"^(?:(?P<top>[A-Z])\.|(?P<code>{_CODE}))\s+(?P<name>\S.*)$")
_CROSS_REF = re.compile(rf"\s*\((?:[A-Z]|{_CODE})(?:\s*,\s*(?:[A-Z]|{_CODE}))*\)\s*$")  # "(D.2.2, D.2.4)"


def acm1998_id(code: str) -> str:
    return f"{SCHEME_1998}:{code}"


def acm2012_id(concept: str) -> str:
    return f"{SCHEME_2012}:{concept}"


def _parent_code(code: str) -> str | None:
    return code.rsplit(".", 1)[0] if "." in code else None


def load_acm1998(path: Path) -> GraphBatch:
    """``acm_ccs1998.txt`` -> AcmClass (scheme 1998) and BROADER; see the module docstring."""
    path = Path(path)
    require_file(path, "ACM CCS 1998")
    lines = _read_text(path).splitlines()
    codes: list[str] = []
    names: list[str] = []
    descriptors: list[list[str]] = []
    origins: list[str] = []
    rejects: list[Reject] = []
    cross_refs = 0
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text:
            continue
        match = _CLASS_LINE.match(text)
        if match is None:  # a subject descriptor of the class above
            if not codes:
                rejects.append(
                    Reject("AcmClass", origin(path, number), f"descriptor {text!r} comes before any coded class")
                )
            else:
                descriptors[-1].append(text)
            continue
        name, n_subs = _CROSS_REF.subn("", match["name"])
        cross_refs += n_subs
        codes.append(match["top"] or match["code"])
        names.append(" ".join(name.split()))
        descriptors.append([])
        origins.append(origin(path, number))

    classes = table(
        {
            "id": [acm1998_id(c) for c in codes],
            "code": codes,
            "name": names,
            "scheme": [SCHEME_1998] * len(codes),
            "level": nullable_ints([c.count(".") + 1 for c in codes]),
            "description": ["; ".join(d) or None for d in descriptors],
            ORIGIN_COLUMN: origins,
        }
    )
    children = [i for i, c in enumerate(codes) if _parent_code(c) is not None]
    broader = table(
        {
            SOURCE_COLUMN: [acm1998_id(codes[i]) for i in children],
            TARGET_COLUMN: [acm1998_id(_parent_code(codes[i]) or "") for i in children],
            ORIGIN_COLUMN: [origins[i] for i in children],
        }
    )
    log.info(
        "%s: %d classes, %d BROADER, %d cross-references dropped", path.name, len(classes), len(broader), cross_refs
    )
    return GraphBatch(SOURCE, nodes={"AcmClass": classes}, rels={"BROADER": broader}, rejects=rejects)


# --- ACM CCS 2012 -------------------------------------------------------------------------------
_NS = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "skos": "http://www.w3.org/2004/02/skos/core#",
}
_ABOUT = f"{{{_NS['rdf']}}}about"
_RESOURCE = f"{{{_NS['rdf']}}}resource"
_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
_CONCEPT_LINE = re.compile(r'<skos:Concept\s[^>]*rdf:about="([^"]+)"')


def load_acm2012(path: Path) -> GraphBatch:
    """``acm_ccs2012.xml`` -> AcmClass (scheme 2012) and BROADER; see the module docstring."""
    path = Path(path)
    require_file(path, "ACM CCS 2012")
    text = _read_text(path)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise IngestError(f"{path}: not well-formed XML ({exc}); download the SKOS file again") from exc
    # ElementTree keeps no line numbers: find each concept's line in the text for reject messages.
    lines = {m.group(1): n for n, line in enumerate(text.splitlines(), 1) if (m := _CONCEPT_LINE.search(line))}

    concepts: list[str] = []
    labels: list[str | None] = []
    parents: dict[str, list[str]] = {}
    rejects: list[Reject] = []
    for element in root.iter(f"{{{_NS['skos']}}}Concept"):
        about = (element.get(_ABOUT) or "").strip()
        where = origin(path, lines[about]) if about in lines else f"{path.name}#{about}"
        if not about:
            rejects.append(Reject("AcmClass", where, "skos:Concept without rdf:about; every concept needs its id"))
            continue
        concepts.append(about)
        labels.append(_pref_label(element))
        parents[about] = [(b.get(_RESOURCE) or "").strip() for b in element.findall("skos:broader", _NS)]

    depth: dict[str, int | None] = {}

    def level(concept: str, seen: frozenset[str] = frozenset()) -> int | None:
        """1 for a top concept, else 1 + the smallest level of its parents; None on a cycle or dangling parent."""
        if concept not in depth:
            ups = parents.get(concept)
            if ups is None or concept in seen:
                return None
            if not ups:
                depth[concept] = 1
            else:
                found = [level(up, seen | {concept}) for up in ups]
                known = [d for d in found if d is not None]
                depth[concept] = 1 + min(known) if known else None
        return depth[concept]

    origins = [origin(path, lines[c]) if c in lines else f"{path.name}#{c}" for c in concepts]
    classes = table(
        {
            "id": [acm2012_id(c) for c in concepts],
            "code": [c.rsplit(".", 1)[-1] for c in concepts],
            "name": labels,
            "scheme": [SCHEME_2012] * len(concepts),
            "level": nullable_ints([level(c) for c in concepts]),
            ORIGIN_COLUMN: origins,
        }
    )
    edges = [(c, up, o) for c, o in zip(concepts, origins) for up in parents[c]]
    broader = table(
        {
            SOURCE_COLUMN: [acm2012_id(c) for c, _, _ in edges],
            TARGET_COLUMN: [acm2012_id(up) if up else "" for _, up, _ in edges],
            ORIGIN_COLUMN: [o for _, _, o in edges],
        }
    )
    log.info("%s: %d concept positions, %d BROADER", path.name, len(classes), len(broader))
    return GraphBatch(SOURCE, nodes={"AcmClass": classes}, rels={"BROADER": broader}, rejects=rejects)


def _pref_label(element: ET.Element) -> str | None:
    """The English ``skos:prefLabel`` (else the first one), whitespace collapsed."""
    labels = element.findall("skos:prefLabel", _NS)
    chosen = next((lab for lab in labels if lab.get(_LANG) == "en"), labels[0] if labels else None)
    if chosen is None or not (chosen.text or "").strip():
        return None
    return " ".join((chosen.text or "").split())


# --- arXiv categories and MAPS_TO ---------------------------------------------------------------
_MENTION = re.compile(rf"(?<![\w.])(?P<code>{_CODE})(?:\s*(?:--|–|-)\s*(?P<end>{_CODE}))?")  # I.4, J.1--J.7
_SINGLE = re.compile(r"\bClass(?:es)?\s+(?P<code>[A-Z])(?=[\s,;)]|\.(?!\w)|$)")  # "all of ACM Subject Class A"
_CODE_LIST = rf"{_CODE}(?:(?:\s*,\s*and\s+|\s*,\s*|\s+and\s+){_CODE})*"
_EXCEPT = re.compile(rf"\bexcept(?:\s+for|\s+that)?\s+(?P<codes>{_CODE_LIST})")  # "except for H.5.1, which ..."


def named_acm_codes(text: str, known: Sequence[str] = ()) -> list[str]:
    """The ACM 1998 codes a category description names, in order of mention, each once.

    Reads the text from its first "ACM" on (a description without "ACM" names none):

    * dotted codes anywhere (``I.2.10``; a trailing full stop is not part of the code), including
      later sentences ("Some material in F.2.1 and F.2.2 may also be appropriate here") and
      "intersects with" lists;
    * a bare top class only right after "Class"/"Classes" ("all of ACM Subject Class A");
    * a range ``J.1--J.7`` is every class of ``known`` (codes in tree order) from ``J.1`` to ``J.7``
      with the same parent; if either end is not in ``known``, the two ends as written;
    * codes right after "except" / "except for" / "except that" are left out ("all of ACM Subject
      Class C.2 except C.2.4, which is more likely to have ... as the primary subject area").

    >>> named_acm_codes("Roughly includes material in ACM Subject Classes I.2.10, I.4, and I.5.")
    ['I.2.10', 'I.4', 'I.5']
    """
    start = text.find("ACM")
    if start < 0:
        return []
    segment = text[start:]
    excluded = [(m.start("codes"), m.end("codes")) for m in _EXCEPT.finditer(segment)]

    def is_excluded(position: int) -> bool:
        return any(lo <= position < hi for lo, hi in excluded)

    found: list[tuple[int, list[str]]] = []
    for m in _MENTION.finditer(segment):
        if is_excluded(m.start()):
            continue
        found.append((m.start(), _expand_range(m["code"], m["end"], known) if m["end"] else [m["code"]]))
    for m in _SINGLE.finditer(segment):
        if not is_excluded(m.start("code")):
            found.append((m.start("code"), [m["code"]]))
    codes: list[str] = []
    for _, group in sorted(found, key=lambda item: item[0]):
        codes.extend(c for c in group if c not in codes)
    return codes


def _expand_range(first: str, last: str, known: Sequence[str]) -> list[str]:
    parent = _parent_code(first)
    if first not in known or last not in known or parent != _parent_code(last):
        return [first, last]
    lo, hi = known.index(first), known.index(last)
    return [c for c in known[lo : hi + 1] if _parent_code(c) == parent]


def load_arxiv(path: Path, acm1998_codes: Sequence[str] | None = None) -> GraphBatch:
    """``arxiv_taxonomy.json`` -> ArxivCategory, plus MAPS_TO when given the 1998 codes in tree (file) order."""
    path = Path(path)
    require_file(path, "arXiv taxonomy")
    text = _read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise IngestError(
            f"{path}: not JSON ({exc.msg} at line {exc.lineno}); download the taxonomy file again"
        ) from exc
    categories = data.get("categories") if isinstance(data, dict) else None
    if not isinstance(categories, dict):
        raise IngestError(f"{path}: no `categories` object; expected arXiv's taxonomy JSON (arxiv-base)")
    lines = _category_lines(text, list(categories))

    rejects: list[Reject] = []
    rows: dict[str, list[object]] = {k: [] for k in ("code", "name", "description", ORIGIN_COLUMN)}
    maps: dict[str, list[object]] = {k: [] for k in (SOURCE_COLUMN, TARGET_COLUMN, "score", "inferred", ORIGIN_COLUMN)}
    known = list(acm1998_codes) if acm1998_codes is not None else None
    known_set = set(known or ())
    for key, entry in categories.items():
        where = origin(path, lines[key]) if key in lines else f"{path.name}#{key}"
        if not isinstance(entry, dict):
            rejects.append(
                Reject("ArxivCategory", where, f"category {key!r} is {type(entry).__name__}, expected an object")
            )
            continue
        code = entry.get("id", key)
        description = entry.get("description")
        rows["code"].append(code)
        rows["name"].append(entry.get("full_name"))
        rows["description"].append(description)
        rows[ORIGIN_COLUMN].append(where)
        if known is None or not isinstance(description, str):
            continue
        for acm in named_acm_codes(description, known):
            if acm not in known_set:
                rejects.append(
                    Reject(
                        "MAPS_TO",
                        where,
                        f"{code} names ACM class {acm!r}, which is not in the ACM CCS 1998 tree ({ACM1998_FILE}); "
                        "check the code in the description",
                    )
                )
                continue
            maps[SOURCE_COLUMN].append(code)
            maps[TARGET_COLUMN].append(acm1998_id(acm))
            maps["score"].append(1.0)
            maps["inferred"].append(False)
            maps[ORIGIN_COLUMN].append(where)
    batch = GraphBatch(SOURCE, nodes={"ArxivCategory": table(rows)}, rejects=rejects)
    if known is not None:
        batch.rels["MAPS_TO"] = table(maps)
    log.info(
        "%s: %d categories, %d MAPS_TO, %d rejects", path.name, len(rows["code"]), len(maps["score"]), len(rejects)
    )
    return batch


def _category_lines(text: str, keys: list[str]) -> dict[str, int]:
    """Line of each category's ``"id": "<code>"`` inside the ``categories`` object (archives reuse some ids)."""
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if line.strip().startswith('"categories"')), 0)
    wanted = set(keys)
    found: dict[str, int] = {}
    id_line = re.compile(r'^\s*"id"\s*:\s*"([^"]+)"')
    for n in range(start, len(lines)):
        if (m := id_line.match(lines[n])) and m.group(1) in wanted and m.group(1) not in found:
            found[m.group(1)] = n + 1
    return found


# --- the whole folder -----------------------------------------------------------------------------
def load(path: Path) -> GraphBatch:
    """The taxonomy folder -> one batch: ACM 1998, ACM 2012, arXiv categories and MAPS_TO."""
    folder = Path(path)
    if not folder.is_dir():
        raise IngestError(
            f"taxonomy: {folder} is not a folder; pass the folder holding {ARXIV_FILE}, {ACM1998_FILE}, {ACM2012_FILE}"
        )
    acm1998 = load_acm1998(folder / ACM1998_FILE)
    codes = acm1998.nodes["AcmClass"]["code"].tolist()
    arxiv = load_arxiv(folder / ARXIV_FILE, codes)
    acm2012 = load_acm2012(folder / ACM2012_FILE)
    return merge_batches(SOURCE, [acm1998, acm2012, arxiv])


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise IngestError(f"{path}: not UTF-8 (byte {exc.start}); re-save the file as UTF-8") from exc


# --- agreement with a reference mapping -----------------------------------------------------------
def mapping_from_batch(batch: GraphBatch) -> dict[str, list[str]]:
    """category code -> ACM 1998 codes, from a batch's MAPS_TO table (``1998:`` prefix removed)."""
    frame = batch.rels.get("MAPS_TO")
    out: dict[str, list[str]] = {}
    if frame is None:
        return out
    prefix = f"{SCHEME_1998}:"
    for source, target in zip(frame[SOURCE_COLUMN], frame[TARGET_COLUMN]):
        out.setdefault(str(source), []).append(str(target).removeprefix(prefix))
    return out


def load_symtax_mapping(path: Path) -> dict[str, list[str]]:
    """SymTax's ``Category_code`` -> ``ACM_subject_classes`` (comma-separated) as lists."""
    require_file(Path(path), "SymTax mapping")
    with Path(path).open(encoding="utf-8", newline="") as handle:
        return {
            row["Category_code"].strip(): [c.strip() for c in row["ACM_subject_classes"].split(",") if c.strip()]
            for row in csv.DictReader(handle)
        }


def _general_as_parent(code: str) -> str:
    """``I.2.0`` (General) -> ``I.2``: SymTax writes the parent where arXiv names the General class."""
    return code[:-2] if code.endswith(".0") else code


def compare_mappings(
    derived: Mapping[str, Collection[str]], reference: Mapping[str, Collection[str]], known: Collection[str]
) -> pd.DataFrame:
    """Per-category agreement of two category -> ACM-code mappings.

    Reference codes not in ``known`` (the ACM 1998 codes; SymTax's own ``M.*`` classes are not)
    are set aside in ``not_acm`` and left out of the comparison. Columns: ``derived``,
    ``reference``, ``shared`` (sorted code lists) and three Jaccard indices
    :math:`J(D, R) = |D \\cap R| / |D \\cup R|` (1.0 when both are empty):

    * ``jaccard``: the codes as written;
    * ``jaccard_general``: after writing ``X.0`` (General) as its parent ``X`` on both sides, as
      SymTax does;
    * ``jaccard_tree``: as ``jaccard_general``, then each code standing for itself and all its
      descendants in ``known``, so "all of I.3" meets a list of I.3's children half way.
    """
    known_set = set(known)

    def subtree(codes: set[str]) -> set[str]:
        return codes | {k for k in known_set for c in codes if k.startswith(c + ".")}

    rows = []
    for category in sorted(set(derived) | set(reference)):
        ours = set(derived.get(category, ()))
        theirs_all = set(reference.get(category, ()))
        theirs = theirs_all & known_set
        lenient_ours = {_general_as_parent(c) for c in ours}
        lenient_theirs = {_general_as_parent(c) for c in theirs}
        rows.append(
            {
                "category": category,
                "derived": sorted(ours),
                "reference": sorted(theirs),
                "not_acm": sorted(theirs_all - known_set),
                "shared": sorted(ours & theirs),
                "jaccard": _jaccard(ours, theirs),
                "jaccard_general": _jaccard(lenient_ours, lenient_theirs),
                "jaccard_tree": _jaccard(subtree(lenient_ours), subtree(lenient_theirs)),
            }
        )
    return pd.DataFrame(rows)


def summarise_agreement(comparison: pd.DataFrame) -> dict[str, float]:
    """Overall agreement over the categories where either side names an ACM class.

    ``categories``; ``identical`` (count with equal code sets); per Jaccard column the mean over
    categories (``mean_<column>``) and the pooled ``micro_jaccard`` = Σ|D ∩ R| / Σ|D ∪ R|.
    """
    compared = comparison[[bool(d) or bool(r) for d, r in zip(comparison["derived"], comparison["reference"])]]
    union = sum(len(set(d) | set(r)) for d, r in zip(compared["derived"], compared["reference"]))
    out: dict[str, float] = {
        "categories": len(compared),
        "identical": int((compared["jaccard"] == 1.0).sum()),
        "micro_jaccard": sum(len(s) for s in compared["shared"]) / union if union else 1.0,
    }
    for column in ("jaccard", "jaccard_general", "jaccard_tree"):
        out[f"mean_{column}"] = float(compared[column].mean()) if len(compared) else 1.0
    return out


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


__all__ = [
    "ACM1998_FILE",
    "ACM2012_FILE",
    "ARXIV_FILE",
    "SOURCE",
    "SYMTAX_FILE",
    "acm1998_id",
    "acm2012_id",
    "compare_mappings",
    "load",
    "load_acm1998",
    "load_acm2012",
    "load_arxiv",
    "load_symtax_mapping",
    "mapping_from_batch",
    "named_acm_codes",
    "summarise_agreement",
]
