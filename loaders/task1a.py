"""The shared task's folders (CL-SciSumm Task 1A): Task 1A inputs and runs, and the CL-SciSumm gold annotations.

A Task 1A folder holds one sub-folder per reference paper (RP)::

    DIR/<RP>/annotation/<RP>.csv        citances (Task 1A run format, Reference Offset/Text blank)
    DIR/<RP>/Reference_XML/<RP>.xml     the RP's sentences (<S sid=.. ssid=..>), parsed leniently

:func:`link_folder` fills ``Reference Offset`` (``'90','91'``) and ``Reference Text``
(``<S sid="90" ssid="12">...</S>``) of every row and writes ``RUN_DIR/<RP>.csv`` with the same
header. Each CSV is written to a temporary file and renamed into place, so an interrupted run
leaves whole files only. A citance with no text, or an RP without a usable Reference_XML, gets an
empty prediction and a warning, never a crash.

:func:`write_task_inputs` turns the CL-SciSumm 2018 training set (``annotation/<RP>.ann.txt``,
gold offsets filled) into such an input folder, and :func:`read_gold` reads its gold links, so
runs can be scored with :func:`gnn.linkage.scoring.score_task1a`.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from graph.errors import ConfigError, DataError
from loaders.scisumm import TASK1A_COLUMNS, read_task1a_csv
from loaders.sentences import (
    XmlSentence,
    clean_text,
    decode_lenient,
    parse_annotation_line,
    parse_offsets,
    parse_sentence_xml,
)

log = logging.getLogger(__name__)

_S_ELEMENT = re.compile(r"<S\b[^>]*>(.*?)</S\s*>", re.IGNORECASE | re.DOTALL)
_ANY_TAG = re.compile(r"</?S\b[^>]*>", re.IGNORECASE)


def citance_text(field: str) -> str:
    """The plain text of a ``Citation Text`` field: the bodies of its ``<S ...>`` elements joined by a space.

    ``'<S sid ="39" ssid = "19">Under this ...</S><S sid ="40" ssid = "20">(1996), Och et al.</S>'``
    becomes ``"Under this ... (1996), Och et al."``. A field without ``<S>`` elements is taken as
    plain text with any stray ``<S ...>``/``</S>`` tag removed.
    """
    bodies = [clean_text(b) for b in _S_ELEMENT.findall(field)]
    bodies = [b for b in bodies if b]
    if bodies:
        return " ".join(bodies)
    return clean_text(_ANY_TAG.sub(" ", field))


CitanceKey = tuple[str, str, tuple[int, ...]]  # (RP, citing article key, citation offset sids)
_SSID = re.compile(r"""<S\s[^>]*?\bsid\s*=\s*["']?(\d+)["']?[^>]*?\bssid\s*=\s*["']?(\d+)""", re.IGNORECASE)


@dataclass(frozen=True)
class Reference:
    """An RP's sentences as read from its Reference_XML."""

    paper_id: str
    sentences: tuple[XmlSentence, ...]
    ssids: dict[int, int]  # sid -> ssid where the file gives one (for the Reference Text cells)

    def element(self, sid: int) -> str:
        """``<S sid="90" ssid="12">text</S>`` of sentence ``sid`` (as the shared task writes Reference Text)."""
        by_sid = {s.sid: s for s in self.sentences}
        ssid = f' ssid="{self.ssids[sid]}"' if sid in self.ssids else ""
        return f'<S sid="{sid}"{ssid}>{by_sid[sid].text}</S>'


def citing_key(name: str) -> str:
    """How a ``Citing Article`` is matched: no extension or ``-parscit`` suffix, lower case, ``_`` as ``-``."""
    stem = re.sub(r"\.(xml|txt)$", "", name.strip(), flags=re.IGNORECASE)
    stem = re.sub(r"-parscit\d*$", "", stem, flags=re.IGNORECASE)
    return stem.lower().replace("_", "-")


def citance_key(rp: str, citing_article: str, citation_offset: str) -> CitanceKey:
    """The key that identifies one citance across inputs, runs and gold files."""
    return (rp, citing_key(citing_article), tuple(parse_offsets(citation_offset)))


def read_reference(folder: Path) -> Reference | None:
    """The RP of ``folder`` (``Reference_XML/<RP>.xml``, else the only XML there); None when there is none."""
    xml_dir = folder / "Reference_XML"
    expected = xml_dir / f"{folder.name}.xml"
    found = [expected] if expected.is_file() else sorted(xml_dir.glob("*.xml")) if xml_dir.is_dir() else []
    if len(found) != 1:
        return None
    raw = found[0].read_bytes()
    parsed = parse_sentence_xml(raw)
    text, _ = decode_lenient(raw)
    ssids = {int(m.group(1)): int(m.group(2)) for m in _SSID.finditer(text)}
    return Reference(folder.name, tuple(parsed.sentences), ssids)


def rp_folders(root: Path) -> Iterator[Path]:
    """The RP sub-folders of a Task 1A folder, sorted by name."""
    if not Path(root).is_dir():
        raise ConfigError(f"{root} is not a folder; pass a CL-SciSumm folder with one sub-folder per reference paper")
    yield from sorted(p for p in Path(root).iterdir() if p.is_dir())


def format_offsets(sids: list[int]) -> str:
    """``[90, 91]`` -> ``'90','91'`` (the run format's Reference Offset)."""
    return ",".join(f"'{sid}'" for sid in sids)


def _write_atomic(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(handle)
    try:
        frame[list(TASK1A_COLUMNS)].to_csv(tmp, index=False, encoding="utf-8", na_rep="")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class LinkReport:
    papers: int  # RP folders with an input CSV
    citances: int  # rows read
    linked: int  # rows that got at least one sentence
    warnings: int  # rows left empty (no text, no reference sentences)
    seconds: float

    def summary(self) -> str:
        return (
            f"linked {self.linked}/{self.citances} citances of {self.papers} reference papers "
            f"({self.warnings} left empty, see the warnings) in {self.seconds:.1f}s"
        )


# (citance texts, reference) -> one list of sids per citance
Predictor = Callable[[list[str], Reference], list[list[int]]]


def link_folder(scisumm_dir: Path, out_dir: Path, predict: Predictor) -> LinkReport:
    """Fill every ``DIR/<RP>/annotation/<RP>.csv`` with ``predict`` and write ``out_dir/<RP>.csv`` (see module)."""
    import time

    started = time.perf_counter()
    papers = citances = linked = warnings = 0
    for folder in rp_folders(Path(scisumm_dir)):
        source = folder / "annotation" / f"{folder.name}.csv"
        if not source.is_file():
            continue
        frame = read_task1a_csv(source)
        papers += 1
        citances += len(frame)
        reference = read_reference(folder)
        texts = [citance_text(t) for t in frame["Citation Text"]]
        if reference is None or not reference.sentences:
            log.warning(
                "%s: no usable Reference_XML/%s.xml; its %d citances get no links", folder.name, folder.name, len(frame)
            )
            predictions: list[list[int]] = [[] for _ in texts]
        else:
            predictions = predict(texts, reference)
        offsets, elements = [], []
        for row, (text, sids) in enumerate(zip(texts, predictions)):
            if not text:
                log.warning("%s row %d: empty Citation Text; no link predicted", source, row + 2)
                sids = []
            if not sids:
                warnings += 1
            else:
                linked += 1
            offsets.append(format_offsets(sids))
            elements.append("".join(reference.element(s) for s in sids) if reference is not None else "")
        frame["Reference Offset"] = offsets
        frame["Reference Text"] = elements
        _write_atomic(frame, Path(out_dir) / f"{folder.name}.csv")
    if papers == 0:
        raise DataError(
            f"{scisumm_dir} has no <RP>/annotation/<RP>.csv; for the CL-SciSumm training set (.ann.txt files), "
            "write an input folder first with `citegraph linkage task-input`"
        )
    return LinkReport(papers, citances, linked, warnings, time.perf_counter() - started)


# ---------------------------------------------------------------------------------------------
# CL-SciSumm 2018 annotations -> task inputs and gold


@dataclass(frozen=True)
class GoldCitance:
    rp: str
    annotator: str  # "" when the line names none
    key: CitanceKey
    fields: dict[str, str]  # the annotation line's fields
    sids: frozenset[int]  # gold Reference Offset


def read_annotations(folder: Path) -> list[GoldCitance]:
    """Every usable gold record of ``folder/annotation/*.txt`` (lines without citation or reference offsets are skipped)."""
    out = []
    for path in sorted((folder / "annotation").glob("*.txt")):
        text, _ = decode_lenient(path.read_bytes())
        for line in text.splitlines():
            fields = parse_annotation_line(line)
            if "Citing Article" not in fields:
                continue
            reference = parse_offsets(fields.get("Reference Offset", ""))
            if not reference or not parse_offsets(fields.get("Citation Offset", "")):
                continue
            key = citance_key(folder.name, fields["Citing Article"], fields.get("Citation Offset", ""))
            out.append(GoldCitance(folder.name, fields.get("Annotator", "") or "", key, fields, frozenset(reference)))
    return out


def read_gold(root: Path) -> dict[tuple[str, str], dict[CitanceKey, frozenset[int]]]:
    """Gold files of a CL-SciSumm training folder: (RP, annotator) -> citance key -> gold sids.

    A citance annotated twice by one annotator keeps the union of the two offsets.
    """
    files: dict[tuple[str, str], dict[CitanceKey, frozenset[int]]] = {}
    for folder in rp_folders(root):
        for record in read_annotations(folder):
            citances = files.setdefault((record.rp, record.annotator), {})
            citances[record.key] = citances.get(record.key, frozenset()) | record.sids
    return files


def write_task_inputs(training_dir: Path, out_dir: Path) -> int:
    """Write a Task 1A input folder from a CL-SciSumm training folder; returns the number of citances.

    One row per distinct citance (``citance_key``) in ``out_dir/<RP>/annotation/<RP>.csv`` with
    Reference Offset and Reference Text blank, and a copy of ``Reference_XML``.
    """
    total = 0
    for folder in rp_folders(training_dir):
        rows: dict[CitanceKey, dict[str, str]] = {}
        for record in read_annotations(folder):
            if record.key in rows:
                continue
            f = record.fields
            row = {column: f.get(column, "") for column in TASK1A_COLUMNS}
            row["Citance Number"] = str(len(rows) + 1)
            row["Citation Text Clean"] = citance_text(f.get("Citation Text", ""))
            row["Reference Offset"] = row["Reference Text"] = ""
            rows[record.key] = row
        if not rows:
            continue
        target = Path(out_dir) / folder.name
        shutil.copytree(folder / "Reference_XML", target / "Reference_XML", dirs_exist_ok=True)
        _write_atomic(
            pd.DataFrame(list(rows.values()), columns=list(TASK1A_COLUMNS)),
            target / "annotation" / f"{folder.name}.csv",
        )
        total += len(rows)
    return total


def read_run(run_dir: Path) -> dict[CitanceKey, list[int]]:
    """Predictions of a run folder (``<RP>.csv`` files) by citance key."""
    out: dict[CitanceKey, list[int]] = {}
    for path in sorted(Path(run_dir).glob("*.csv")):
        frame = read_task1a_csv(path)
        for _, row in frame.iterrows():
            key = citance_key(path.stem, row["Citing Article"], row["Citation Offset"])
            out[key] = parse_offsets(row["Reference Offset"])
    return out


__all__ = [
    "CitanceKey",
    "GoldCitance",
    "LinkReport",
    "Reference",
    "citance_key",
    "citance_text",
    "citing_key",
    "format_offsets",
    "link_folder",
    "read_annotations",
    "read_gold",
    "read_reference",
    "read_run",
    "rp_folders",
    "write_task_inputs",
]
