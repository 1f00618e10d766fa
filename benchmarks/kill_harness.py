"""Kill every writing command with SIGKILL at random points and check what it leaves.

Two small stores, each built by the stages before the one killed (a *stage* runs one command on the
store the stage it starts from left). The synthetic chain: a cut of the shared taxonomy (the ACM 1998
classes under H and I, the ACM 2012 concepts of the first two levels under Computing methodologies, five
arXiv categories: so that ``compute hyperbolic`` takes seconds, not minutes) and a seeded synthetic corpus
(papers with titles, abstracts, arXiv categories and citations with contexts). The ScisummNet chain: every
``--scisummnet-every``-th reference paper of the shared ScisummNet corpus (full texts, citing sentences),
for the index, the reranker and the sentence linker.

==================  ==================  ==============================================================================
stage               starts from         command
==================  ==================  ==============================================================================
first-load          nothing             ``ingest taxonomy <cut>`` into a store that does not exist yet
later-load          first-load          ``ingest jsonl corpus.jsonl`` (one transaction)
cocitation          later-load          ``compute cocitation``
embeddings          cocitation          ``compute embeddings --embed papers``
taxonomy            embeddings          ``compute taxonomy``
hyperbolic-old      taxonomy            ``compute hyperbolic --seed 1`` (an older h_θ and older coordinates)
hyperbolic          hyperbolic-old      ``compute hyperbolic`` (h_θ, ``--map-epochs`` steps, under ``<cache>/models``)
copy                taxonomy            ``copy --from embedded --to embedded`` into a new store
scisumm-load        nothing             ``ingest scisummnet <cut>``
scisumm-embed-some  scisumm-load        ``compute embeddings --embed papers --limit 10``
index-old           scisumm-embed-some  ``compute index``, encoder cache empty (an older index: half the vectors)
scisumm-embed       index-old           ``compute embeddings --embed papers``
index               scisumm-embed       ``compute index`` (index, citances and profiles beside the store)
reranker-old        index               ``train reranker --seed 1`` (an older reranker)
reranker            reranker-old        ``train reranker`` (``<db>.index.reranker/``)
linker-old          nothing             ``linkage train --c 0.5`` (an older linker; no store)
linker              linker-old          ``linkage train`` (``<cache>/models/linker.json``; no store)
linkage             scisumm-embed       ``compute linkage`` with the linker stage's model
==================  ==================  ==============================================================================

(``-old`` stages are never killed: they give the killed stage an older artefact to replace.) Each run has
its own ``$CITEGRAPH_CACHE`` (models, example caches) sharing one encoder cache. For each killed stage a
clean run gives the expected result and the run time T (the faster of two clean runs; the second finds the
encoder cache warm), and the two runs must agree (is the stage deterministic at all?). The result is the
store (``stats --json`` and every table, sorted, floats compared to 1e-5) and the stage's files, byte for
byte (the stamp an index records of its store aside: it is checked to be the store's stamp instead). Then,
``--kills`` times in all (stages in turn): copy the stage's starting state, start the command, send SIGKILL
after a uniform random delay in [0, T), and check that

1. the store opens read-only (a first load killed before it created the store leaves none: counted apart),
2. the store opens read-write,
3. each of the stage's files loads, and is the starting state's (older) one or the clean run's (newer),
4. a rerun of the same command exits 0,
5. the result equals the clean run's, and the index and citances beside the store are current (their stamp
   is the store's, :class:`graph.files.StoreFiles`).

Commands run in children of a fork server that has imported the CLI and torch once, so a kill lands in
the command's work, not in seconds of imports. Records go to ``docs/results/``::

    python benchmarks/kill_harness.py --kills 105 --out docs/results/kill_harness.json
    python benchmarks/kill_harness.py --kills 60 --stages hyperbolic,index,reranker,linker,linkage \\
        --out docs/results/kill_harness_models.json
    python benchmarks/render_results.py
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import multiprocessing as mp
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

DB = "s.db"
WORDS = (
    "citation",
    "graph",
    "parsing",
    "tagger",
    "translation",
    "alignment",
    "neural",
    "embedding",
    "retrieval",
    "ranking",
    "corpus",
    "sentence",
    "summarization",
    "dependency",
    "semantic",
    "lexical",
    "model",
    "attention",
    "hyperbolic",
    "taxonomy",
    "cluster",
    "network",
    "query",
    "document",
    "entity",
    "relation",
    "extraction",
    "learning",
    "transfer",
    "language",
    "speech",
    "dialogue",
    "vision",
)
CATEGORIES = ("cs.CL", "cs.IR", "cs.LG", "cs.AI", "cs.DL")  # the arXiv categories of the taxonomy cut
ACM1998_TOPS = "HI"  # the ACM 1998 top classes of the taxonomy cut (Information Systems, Computing Methodologies)
ACM2012_ROOT = "10010147"  # the ACM 2012 top concept of the cut (Computing methodologies), two levels of it


@dataclass(frozen=True)
class Stage:
    name: str
    argv: tuple[str, ...]  # after `citegraph --db <db> -q`; {placeholders} filled in by fill()
    start: str | None  # the stage whose clean result this one starts from (None: nothing)
    target: str = DB  # the store the command writes (copy writes another)
    files: tuple[str, ...] = ()  # the artefacts it writes beside the store or under the cache (ARTEFACTS)
    store: bool = True  # False: the command never opens a store (linkage train): no store checks
    models_from: str | None = None  # a stage whose cache/models/ this one needs too (compute linkage: the linker)
    killed: bool = True  # False: a stage that only prepares an older state for the next one
    # False: an empty encoder cache of its own (the index then finds no vector for a paper not yet embedded)
    shared_encoder_cache: bool = True


def stages(epochs: int, map_epochs: int, limit: int) -> list[Stage]:
    hyperbolic = ("compute", "hyperbolic", "--epochs", str(epochs), "--map-epochs", str(map_epochs))
    reranker = (
        "train",
        "reranker",
        "--objective",
        "triplet",
        "--limit",
        str(limit),
        "--mart-seeds",
        "2",
        "--out",
        "{work}/reranker.json",
    )
    return [
        Stage("first-load", ("ingest", "taxonomy", "{taxonomy}"), None),
        Stage("later-load", ("ingest", "jsonl", "{corpus}"), "first-load"),
        Stage("cocitation", ("compute", "cocitation"), "later-load"),
        Stage("embeddings", ("compute", "embeddings", "--embed", "papers"), "cocitation"),
        Stage("taxonomy", ("compute", "taxonomy"), "embeddings"),
        Stage("hyperbolic-old", (*hyperbolic, "--seed", "1"), "taxonomy", files=("hyperbolic_map",), killed=False),
        Stage("hyperbolic", hyperbolic, "hyperbolic-old", files=("hyperbolic_map",)),
        Stage(
            "copy",
            ("copy", "--from", "embedded", "--to", "embedded", "--from-db", "{src}", "--to-db", "{dst}",
             "--progress-file", "{progress}", "--batch-size", "200"),
            "taxonomy",
            target="copy.db",
        ),
        Stage("scisumm-load", ("ingest", "scisummnet", "{scisummnet}", "--on-error", "skip", "--rejects-dir",
                               "{work}/rejects"), None, killed=False),
        Stage("scisumm-embed-some", ("compute", "embeddings", "--embed", "papers", "--limit", "10"), "scisumm-load",
              killed=False),
        Stage("index-old", ("compute", "index"), "scisumm-embed-some", files=INDEX_FILES, killed=False,
              shared_encoder_cache=False),
        Stage("scisumm-embed", ("compute", "embeddings", "--embed", "papers"), "index-old", killed=False),
        Stage("index", ("compute", "index"), "scisumm-embed", files=INDEX_FILES),
        Stage("reranker-old", (*reranker, "--seed", "1"), "index", files=("reranker",), killed=False),
        Stage("reranker", reranker, "reranker-old", files=("reranker",)),
        Stage("linker-old", ("linkage", "train", "--c", "0.5"), None, files=("linker",), store=False, killed=False),
        Stage("linker", ("linkage", "train"), "linker-old", files=("linker",), store=False),
        Stage("linkage", ("compute", "linkage"), "scisumm-embed", models_from="linker"),
    ]  # fmt: skip


INDEX_FILES = ("index", "citances", "profiles")
DEFAULT_STAGES = ("first-load", "later-load", "cocitation", "embeddings", "taxonomy", "copy")


def write_corpus(path: Path, papers: int, seed: int) -> None:
    """A seeded synthetic corpus in the JSON Lines format of docs/data.md."""
    rng = random.Random(seed)
    lines = []
    for i in range(papers):

        def text(n: int) -> str:
            return " ".join(rng.choice(WORDS) for _ in range(n))

        lines.append(
            {
                "type": "paper",
                "id": f"syn-{i}",
                "title": text(6).capitalize(),
                "abstract": text(40).capitalize() + ".",
                "year": 2000 + i * 20 // papers,
                "authors": [f"Author {rng.randrange(papers // 3)}", f"Author {rng.randrange(papers // 3)}"],
                "categories": rng.sample(CATEGORIES, rng.randint(0, 2)),
            }
        )
        for cited in sorted(set(rng.sample(range(i), min(i, 5)))):
            lines.append(
                {"type": "citation", "citing": f"syn-{i}", "cited": f"syn-{cited}", "contexts": [text(12) + "."]}
            )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def write_taxonomy(folder: Path, source: Path) -> None:
    """A cut of the taxonomy folder ``source`` in its own formats (see the module docstring)."""
    folder.mkdir(parents=True, exist_ok=True)
    from loaders.taxonomy import ACM1998_FILE, ACM2012_FILE, ARXIV_FILE

    kept, keep = [], False
    for line in (source / ACM1998_FILE).read_text(encoding="utf-8").splitlines():
        if re.match(r"^[A-Z](\.| )", line):  # a class line (descriptor lines follow their class)
            keep = line[0] in ACM1998_TOPS
        if keep:
            kept.append(line)
    (folder / ACM1998_FILE).write_text("\n".join(kept) + "\n", encoding="utf-8")
    arxiv = json.loads((source / ARXIV_FILE).read_text(encoding="utf-8"))
    arxiv["categories"] = {code: entry for code, entry in arxiv["categories"].items() if code in CATEGORIES}
    (folder / ARXIV_FILE).write_text(json.dumps(arxiv, indent=1), encoding="utf-8")
    text = (source / ACM2012_FILE).read_text(encoding="utf-8")
    head = text[: text.index("<skos:ConceptScheme")]
    concepts = re.findall(r'(  <skos:Concept rdf:about="([^"]+)">.*?</skos:Concept>\n)', text, flags=re.S)
    chosen = [block for block, about in concepts if about.split(".")[0] == ACM2012_ROOT and about.count(".") <= 2]
    (folder / ACM2012_FILE).write_text(head + "".join(chosen) + "</rdf:RDF>\n", encoding="utf-8")


def cut_scisummnet(folder: Path, source: Path, every: int) -> None:
    """Every ``every``-th reference paper folder of ScisummNet ``source``, linked into ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    papers = sorted(p for p in source.iterdir() if p.is_dir())
    for paper in papers[every - 1 :: every]:
        if not (folder / paper.name).exists():
            (folder / paper.name).symlink_to(paper)


# commands in fork-server children -------------------------------------------------------------------
def _child(argv: list[str], cwd: str, log: str) -> None:
    """Run ``citegraph ARGV`` in this child, its output to ``log``, its cache ``cwd/cache``; exits with its status."""
    os.chdir(cwd)
    os.environ["CITEGRAPH_CACHE"] = str(Path(cwd) / CACHE)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    from api.cli.main import main

    sys.exit(main(argv))


def start(ctx: Any, argv: list[str], cwd: Path, log: Path) -> Any:
    process = ctx.Process(target=_child, args=(argv, str(cwd), str(log)))
    process.start()
    return process


def run(ctx: Any, argv: list[str], cwd: Path, log: Path, timeout: float) -> tuple[int, float]:
    started = time.perf_counter()
    process = start(ctx, argv, cwd, log)
    process.join(timeout)
    if process.exitcode is None:
        process.kill()
        process.join()
        return -1, time.perf_counter() - started
    return int(process.exitcode), time.perf_counter() - started


# checks in this process ----------------------------------------------------------------------------
class Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def opens(path: Path, *, read_only: bool) -> str | None:
    """None when the store opens (and counts its nodes), else the error."""
    from graph import CitegraphError, StoreConfig, open_store

    try:
        with open_store(StoreConfig(db_path=path, read_only=read_only)) as store:
            store.stats()
        return None
    except CitegraphError as exc:
        return str(exc)


def snapshot(path: Path) -> dict[str, Any]:
    """``stats --json`` and every table as a frame sorted by all its plain columns."""
    import pandas as pd

    from graph import StoreConfig, open_store

    with open_store(StoreConfig(db_path=path, read_only=True)) as store:
        tables: dict[str, Any] = {"stats": store.stats()}
        for label in store.schema.nodes:
            frames = list(store.iter_nodes(label, 100_000))
            tables[label] = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
        for rel in store.schema.rels:
            tables[rel] = store.read_edges(rel)
    for name, frame in tables.items():
        if name != "stats" and len(frame):
            plain = [c for c in frame.columns if frame[c].map(_scalar).all()]
            tables[name] = frame.sort_values(plain).reset_index(drop=True) if plain else frame
    return tables


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, bytes, int, float, bool)) or getattr(value, "ndim", 1) == 0


def difference(expected: dict[str, Any], got: dict[str, Any]) -> str | None:
    """The first difference between two snapshots, or None."""
    import numpy as np

    if expected["stats"] != got["stats"]:
        return f"stats differ: {got['stats']} vs {expected['stats']}"
    for name, frame in expected.items():
        if name == "stats":
            continue
        other = got[name]
        if list(frame.columns) != list(other.columns) or len(frame) != len(other):
            return f"{name}: shape {other.shape} vs {frame.shape}"
        for column in frame.columns:
            for i, (a, b) in enumerate(zip(frame[column].to_numpy(), other[column].to_numpy())):
                if not _same(a, b, np):
                    return f"{name}.{column} row {i}: {b!r:.80} vs {a!r:.80}"
    return None


def _same(a: Any, b: Any, np: Any) -> bool:
    if a is None or b is None or (isinstance(a, float) and np.isnan(a)) or (isinstance(b, float) and np.isnan(b)):
        return (a is None or (isinstance(a, float) and np.isnan(a))) and (
            b is None or (isinstance(b, float) and np.isnan(b))
        )
    if isinstance(a, str) or isinstance(b, str):
        return bool(a == b)
    if hasattr(a, "__len__") or hasattr(b, "__len__"):
        x, y = np.asarray(a), np.asarray(b)
        if x.shape != y.shape:
            return False
        if x.dtype.kind in "fc" or y.dtype.kind in "fc":
            return bool(np.allclose(x.astype(float), y.astype(float), atol=1e-5, equal_nan=True))
        return bool((x == y).all())
    if isinstance(a, float) or isinstance(b, float):
        return bool(abs(float(a) - float(b)) <= 1e-5 * max(1.0, abs(float(a))))
    return bool(a == b)


# the files beside a store or under its cache --------------------------------------------------------
CACHE = "cache"  # each run's $CITEGRAPH_CACHE, inside its working folder; cache/embeddings is shared
ARTEFACTS = ("index", "citances", "profiles", "reranker", "hyperbolic_map", "linker")
STAMP_FIELD = "store_stamp"  # the index manifest's record of its store (compared with the store, not the clean run)


def store_files(work: Path, target: str = DB) -> Any:
    from graph.files import StoreFiles

    return StoreFiles(work / target, cache=work / CACHE)


def artefact_path(work: Path, name: str, target: str = DB) -> Path:
    path = getattr(store_files(work, target), name)
    assert path is not None
    return Path(path)


def fingerprint(work: Path, name: str) -> dict[str, str]:
    """sha256 of every file of the artefact ``name`` (relative path -> digest); {} when it is absent.

    The index's store stamp and the citances' stamp record the store's file times: they are left out
    here and checked against the store by :func:`stale` instead. Of h_θ, the map ``latest`` names.
    """
    path = artefact_path(work, name)
    if name == "citances":
        return {path.name: _digest(path.read_bytes())} if path.is_file() else {}
    if name == "hyperbolic_map":  # the map `latest` names: older maps stay beside it, under their own keys
        latest = path / "latest"
        if not latest.is_file():
            return {}
        model = path / latest.read_text(encoding="utf-8").strip()
        return {
            "latest": _digest(latest.read_bytes()),
            model.name: _digest(model.read_bytes()) if model.is_file() else "-",
        }
    files = sorted(f for f in path.rglob("*") if f.is_file()) if path.is_dir() else [path] if path.is_file() else []
    out = {}
    for file in files:
        data = file.read_bytes()
        if name == "index" and file.name == "manifest.json":
            manifest = json.loads(data)
            manifest.pop(STAMP_FIELD, None)
            data = json.dumps(manifest, sort_keys=True).encode()
        out[str(file.relative_to(path.parent))] = _digest(data)
    return out


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def stale(work: Path) -> list[str]:
    """The index files beside the store whose recorded store stamp is not the store's stamp now."""
    return [
        f"{entry.name} (built from {entry.built_from})"
        for entry in store_files(work).describe()
        if entry.name in ("index", "citances") and entry.current is False
    ]


def loads(work: Path, name: str) -> str | None:
    """None when the artefact ``name`` is absent or loads as its reader loads it; else what failed."""
    path = artefact_path(work, name)
    if not path.exists():
        return None
    try:
        if name == "index":
            from gnn.retrieval.index import IndexSettings, RetrievalIndex

            RetrievalIndex.load(path, IndexSettings())
        elif name == "citances":
            import pandas as pd

            pd.read_parquet(path)
        elif name == "profiles":
            import numpy as np

            meta = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
            assert len(np.load(path / "vectors.npy")) == meta["rows"], "rows differ from the manifest"
        elif name == "reranker":
            from gnn.rerank.lambdamart import load_blend
            from gnn.rerank.model import load_reranker

            _, config = load_reranker(path)
            load_blend(path, config)
        elif name == "hyperbolic_map":
            from gnn.hyperbolic.map import load_class_points, load_hyperbolic_map

            load_hyperbolic_map(path)
            load_class_points(path)
        elif name == "linker":
            from gnn.linkage import Linker

            Linker.load(path)
    except Exception as exc:  # any failure to load is what the harness reports
        return f"{type(exc).__name__}: {exc}"[:300]
    return None


# what sits beside a store by design (StoreFiles), not left by a kill
BESIDE = (".clusters.json", ".index", ".index.citances.parquet", ".index.citances.stamp", ".index.profiles",
          ".index.reranker")  # fmt: skip


def leftovers(work: Path, stage: Stage) -> list[str]:
    """Files a kill left beside the target store or under the run's models folder (not the store and its artefacts)."""
    names = [n.removeprefix(stage.target) for n in os.listdir(work) if n.startswith(stage.target)]
    names = [n for n in names if n and n not in BESIDE]
    models = work / CACHE / "models"
    if models.is_dir():
        names += [f"models/{f.relative_to(models)}" for f in models.rglob("*") if f.name.endswith((".tmp", ".old"))]
    return names


# the harness ---------------------------------------------------------------------------------------
@dataclass
class StageResult:
    files: tuple[str, ...] = ()  # the stage's artefacts (Stage.files)
    store: bool = True  # the stage opens a store (Stage.store)
    clean_s: float = 0.0
    deterministic: bool = True
    kills: int = 0  # SIGKILLs that landed while the command ran
    finished_first: int = 0  # the command ended before its kill was due
    no_store: int = 0  # a kill before the store file existed (first load)
    opened_ro: int = 0
    opened_rw: int = 0
    files_load: int = 0  # every file of the stage loads after the kill, the old one or the new one
    files_new: int = 0  # of those, kills after which the stage's files were already the clean run's
    reruns_ok: int = 0
    identical: int = 0
    left: Counter[str] = field(default_factory=Counter)  # files beside the store after a kill
    repaired: Counter[str] = field(default_factory=Counter)  # the opens' warning lines, by kind
    failures: list[str] = field(default_factory=list)


@dataclass
class Expected:
    """A clean run's result: the store snapshot (None: no store) and each file's fingerprint."""

    store: dict[str, Any] | None
    files: dict[str, dict[str, str]]


def result_of(stage: Stage, work: Path) -> Expected:
    return Expected(
        snapshot(work / stage.target) if stage.store else None, {n: fingerprint(work, n) for n in stage.files}
    )


def mismatch(expected: Expected, got: Expected) -> str | None:
    """The first difference between two results, or None."""
    if expected.store is not None and got.store is not None and (diff := difference(expected.store, got.store)):
        return diff
    for name, prints in expected.files.items():
        if got.files.get(name) != prints:
            return f"{name}: files {got.files.get(name)} vs {prints}"
    return None


def fill(argv: tuple[str, ...], work: Path, inputs: dict[str, Path]) -> list[str]:
    names = {"{src}": str(work / "src.db"), "{dst}": str(work / "copy.db"),
             "{progress}": str(work / "copy.progress.json"), **{f"{{{k}}}": str(v) for k, v in inputs.items()}}  # fmt: skip
    return [names.get(a, a).replace("{work}", str(work)) for a in argv]


def prepare(stage: Stage, starts: dict[str, Path], work: Path, shared_cache: Path) -> None:
    """``work`` holds what the stage starts from: the store (for copy: the source, as src.db), the files
    beside it, and its cache (models of its own, the shared encoder cache linked in)."""
    if work.exists():
        shutil.rmtree(work)
    if stage.start is None:
        work.mkdir(parents=True)
    else:
        shutil.copytree(starts[stage.start], work, symlinks=True)
    for name in ("log.txt", "killed.txt", "rerun.txt"):
        (work / name).unlink(missing_ok=True)
    models = work / CACHE / "models"
    models.mkdir(parents=True, exist_ok=True)
    if stage.models_from is not None:
        shutil.copytree(starts[stage.models_from] / CACHE / "models", models, dirs_exist_ok=True)
    embeddings = work / CACHE / "embeddings"
    if embeddings.is_symlink() or embeddings.is_file():
        embeddings.unlink()
    elif embeddings.is_dir():
        shutil.rmtree(embeddings)
    if stage.shared_encoder_cache:
        embeddings.symlink_to(shared_cache / "embeddings", target_is_directory=True)
    else:
        embeddings.mkdir()
    if stage.target != DB:
        (work / DB).rename(work / "src.db")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=105, help="SIGKILLs that land while a command runs, in all")
    parser.add_argument("--papers", type=int, default=150, help="papers of the synthetic corpus")
    parser.add_argument("--epochs", type=int, default=3, help="epochs of compute hyperbolic")
    parser.add_argument("--map-epochs", type=int, default=50, help="compute hyperbolic --map-epochs (h_θ's steps)")
    parser.add_argument("--scisummnet-every", type=int, default=50, help="ScisummNet reference papers kept: every Nth")
    parser.add_argument("--limit", type=int, default=30, help="train reranker --limit (queries per split)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--stages",
        default=",".join(DEFAULT_STAGES),
        help="comma-separated stages to kill (default: the loads and the compute steps of the synthetic store, "
        f"and copy; also: {', '.join(s.name for s in stages(0, 0, 0) if s.killed and s.name not in DEFAULT_STAGES)})",
    )
    parser.add_argument("--work", help="working folder (default: a temporary one, removed; reuse one to keep "
                        "its encoder cache)")  # fmt: skip
    parser.add_argument("--out", help="JSON record to write (e.g. docs/results/kill_harness.json)")
    args = parser.parse_args()

    logging.basicConfig(level=logging.ERROR)
    catcher = Warnings()
    logging.getLogger("graph").addHandler(catcher)
    logging.getLogger("graph").setLevel(logging.WARNING)
    logging.getLogger("graph").propagate = False
    root = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="kill-harness-"))
    root.mkdir(parents=True, exist_ok=True)
    data = Path(os.environ.get("CITEGRAPH_DATA", str(ROOT.parent / "shared" / "data")))
    shared_cache = root / CACHE
    (shared_cache / "embeddings").mkdir(parents=True, exist_ok=True)
    os.environ.update(
        CITEGRAPH_CACHE=str(shared_cache), HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT), CITEGRAPH_DATA=str(data)
    )
    inputs = {"corpus": root / "corpus.jsonl", "taxonomy": root / "taxonomy", "scisummnet": root / "scisummnet"}
    write_corpus(inputs["corpus"], args.papers, args.seed)
    write_taxonomy(inputs["taxonomy"], data / "taxonomy")
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(["api.cli.main", "torch", "gnn.taxonomy.compute", "gnn.hyperbolic.compute"])
    warm = ctx.Process(target=os.getpid)  # starts the fork server: its imports do not count in T
    warm.start()
    warm.join()
    rng = random.Random(args.seed)
    all_stages = {s.name: s for s in stages(args.epochs, args.map_epochs, args.limit)}
    wanted = args.stages.split(",")
    if unknown := [w for w in wanted if w not in all_stages or not all_stages[w].killed]:
        sys.exit(f"unknown stage(s) {unknown}; killed stages: {[n for n, s in all_stages.items() if s.killed]}")
    chosen = [s for s in all_stages.values() if s.name in wanted]
    starts: dict[str, Path] = {}
    expected: dict[str, Expected] = {}
    results = {s.name: StageResult(s.files, s.store) for s in chosen}
    began = time.perf_counter()

    # clean runs: each needed stage once, each killed stage twice (is it deterministic?); T the faster run
    needed: list[Stage] = []
    for stage in chosen:  # the stages a chosen one starts from (or takes models from) run clean too
        chain, todo = [], [stage]
        while todo:
            step = todo.pop()
            if step in chain or step in needed:
                continue
            chain.append(step)
            todo += [all_stages[n] for n in (step.start, step.models_from) if n is not None]
        needed += [s for s in reversed(chain) if s not in needed]
    needed.sort(key=lambda s: list(all_stages).index(s.name))
    if all_stages["scisumm-load"] in needed:
        cut_scisummnet(inputs["scisummnet"], data / "scisumm" / "ScisummNet-2019", args.scisummnet_every)
    for stage in needed:
        for attempt in (0, 1) if stage.name in results else (0,):
            work = root / "clean" / f"{stage.name}-{attempt}"
            prepare(stage, starts, work, shared_cache)
            argv = ["--db", str(work / DB), "-q", *fill(stage.argv, work, inputs)]
            code, seconds = run(ctx, argv, work, work / "log.txt", 1800)
            if code != 0:
                sys.exit(f"clean run of {stage.name} failed ({code}): {(work / 'log.txt').read_text()[-3000:]}")
            got = result_of(stage, work)
            if stage.name in results:
                result = results[stage.name]
                result.clean_s = seconds if attempt == 0 else min(result.clean_s, seconds)
                if attempt == 0 and "index" in stage.files and (problem := stale(work)):
                    result.failures.append(f"the clean run left stale files: {problem}")
            if attempt == 0:
                starts[stage.name], expected[stage.name] = work, got
            elif diff := mismatch(expected[stage.name], got):
                results[stage.name].deterministic = False
                results[stage.name].failures.append(f"two clean runs differ: {diff}")
        print(f"clean {stage.name}: {results.get(stage.name, StageResult()).clean_s:.1f}s", flush=True)

    # kills
    order = [s for s in chosen if results[s.name].deterministic]
    landed = 0
    turn = 0
    while landed < args.kills and order:
        stage = order[turn % len(order)]
        turn += 1
        result = results[stage.name]
        work = root / "kill" / stage.name
        prepare(stage, starts, work, shared_cache)
        before = result_of(stage, work) if stage.files else None  # the older files the command replaces
        argv = ["--db", str(work / DB), "-q", *fill(stage.argv, work, inputs)]
        process = start(ctx, argv, work, work / "killed.txt")
        time.sleep(rng.uniform(0, result.clean_s))
        if process.exitcode is not None:
            result.finished_first += 1
            process.join()
            if process.exitcode != 0:
                result.failures.append(f"{stage.name}: a run that ended before its kill exited {process.exitcode}")
            continue
        os.kill(process.pid, signal.SIGKILL)
        process.join()
        landed += 1
        result.kills += 1
        where = f"{stage.name} kill {result.kills}"
        result.left.update(leftovers(work, stage))
        catcher.lines.clear()
        if stage.store:
            check_opens(work / stage.target, where, result)
        for line in catcher.lines:
            kind = ("first-load files" if ".building" in line else "torn WAL" if "torn" in line
                    else "interrupted checkpoint" if "checkpoint" in line else "staging table" if "staging" in line
                    else "other")  # fmt: skip
            result.repaired[kind] += 1
        if stage.files:
            check_files(stage, work, where, before, expected[stage.name], result)
        code, _ = run(ctx, argv, work, work / "rerun.txt", 1800)
        if code != 0:
            result.failures.append(f"{where}: rerun exited {code}: {(work / 'rerun.txt').read_text()[-800:]}")
            continue
        result.reruns_ok += 1
        diff = mismatch(expected[stage.name], result_of(stage, work))
        if diff is None and "index" in stage.files and (problem := stale(work)):
            diff = f"stale after the rerun: {problem}"
        if diff:
            result.failures.append(f"{where}: the rerun's result differs: {diff}")
            shutil.copytree(work, root / "failed" / f"{stage.name}-{result.kills}", dirs_exist_ok=True, symlinks=True)
        else:
            result.identical += 1
        print(f"{where}: ok={not result.failures}", flush=True)
    elapsed = time.perf_counter() - began

    report = record(args, results, landed, elapsed)
    for row in report["tables"][0]["rows"]:
        print(f"{row['system']:<14} {row['metric']:<24} {row['value']}")
    print(json.dumps(report["summary"], indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if not args.work:
        shutil.rmtree(root, ignore_errors=True)
    failed = sum(len(r.failures) for r in results.values())
    return 1 if failed or landed < args.kills else 0


def check_opens(target: Path, where: str, result: StageResult) -> None:
    """Checks 1 and 2: the store opens read-only (when there is one) and read-write."""
    if not target.exists():
        result.no_store += 1
    elif (error := opens(target, read_only=True)) is None:
        result.opened_ro += 1
    else:
        result.failures.append(f"{where}: read-only open: {error}")
    if (error := opens(target, read_only=False)) is None:
        result.opened_rw += 1
    else:
        result.failures.append(f"{where}: read-write open: {error}")


def check_files(
    stage: Stage, work: Path, where: str, before: Expected | None, after: Expected, result: StageResult
) -> None:
    """Check 3: each file of the stage loads and is the older one or the clean run's, never a mix."""
    problems = [f"{name}: {error}" for name in stage.files if (error := loads(work, name))]
    now = {name: fingerprint(work, name) for name in stage.files}
    older = before.files if before is not None else {}
    mixed = [name for name in stage.files if now[name] not in (older.get(name), after.files[name], {})]
    if problems or mixed:
        result.failures.append(
            f"{where}: after the kill, {'; '.join(problems + [f'{n} is neither the old nor the new one' for n in mixed])}"
        )
        return
    result.files_load += 1
    result.files_new += all(now[name] == after.files[name] for name in stage.files)


def record(args: argparse.Namespace, results: dict[str, StageResult], landed: int, elapsed: float) -> dict[str, Any]:
    from run_record import commit, run_record

    rows = []
    for name, r in results.items():
        store = r.store or None  # "-" for a command without a store
        files = bool(r.files) or None
        for metric, value in (
            ("clean run (s)", round(r.clean_s, 2)),
            ("kills", r.kills),
            ("ended before the kill", r.finished_first),
            ("no store yet", store and r.no_store),
            ("opens read-only", store and r.opened_ro),
            ("opens read-write", store and r.opened_rw),
            ("files checked", ", ".join(r.files) or None),
            ("files load, old or new", files and r.files_load),
            ("files already new", files and r.files_new),
            ("rerun exits 0", r.reruns_ok),
            ("rerun = clean run", r.identical),
            ("repaired on open", ", ".join(f"{k} {v}" for k, v in sorted(r.repaired.items())) or "-"),
            ("left beside the store", ", ".join(f"{k} {v}" for k, v in sorted(r.left.items())) or "-"),
        ):
            if value is not None:
                rows.append({"system": name, "metric": metric, "value": value})
    record = run_record("benchmarks/kill_harness.py", args)
    return {
        "capability": "build",
        "kind": "quality",
        "title": "Crash safety: writing commands killed with SIGKILL at random points"
        + ("" if set(results) <= set(DEFAULT_STAGES) else f" ({', '.join(results)})"),
        **record,
        "machine": f"2-core development machine shared with other sessions; {record['machine']}",
        "commit": commit(short=True),
        "notes": [
            f"{landed} kills in {elapsed / 60:.1f} min; after each, the store opened read-only (unless a first "
            "load was killed before creating it) and read-write, the stage's files (index, reranker, h_θ, linker) "
            "loaded and were the older ones or the clean run's, a rerun exited 0 and its result (stats and every "
            "table, floats to 1e-5; files byte for byte, the index and citances current per their store stamp) "
            "equalled a clean run's, except where the failures list says otherwise.",
            "Kill delays are uniform in [0, T) of the command's clean run (the faster of two; the second finds the "
            "encoder cache warm); commands start in children of a fork server that has imported the CLI, so kills "
            "land in the work, not in imports.",
            "The synthetic store holds a cut of the shared taxonomy (ACM 1998 H and I, two levels of ACM 2012's "
            "Computing methodologies, five arXiv categories); the ScisummNet store every "
            f"{args.scisummnet_every}th reference paper of ScisummNet 2019. '-old' stages (not killed) give the "
            "killed stage older files to replace.",
        ],
        "summary": {
            "kills": landed,
            "minutes": round(elapsed / 60, 1),
            "failures": [f for r in results.values() for f in r.failures],
        },
        "tables": [{"title": None, "row_header": "stage", "baselines": [], "served": None, "rows": rows}],
    }


if __name__ == "__main__":
    sys.exit(main())
