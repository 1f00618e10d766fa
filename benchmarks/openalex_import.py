"""OpenAlex import at snapshot scale: time and peak memory of ``loaders.openalex`` + ingest.

OpenAlex publishes no small untouched snapshot partition, so this makes one: a gzipped JSON Lines
file of N works, each a copy of one of the real works in ``$CITEGRAPH_DATA/formats/openalex``
(taken in turn; ~20 KB of JSON each, with abstracts, authorships, locations, topics, concepts,
counts) with what makes works distinct varied, seeded:

* ``id``, ``ids.openalex``: ``W<5e9 + i>``; ``doi``/``ids.doi``: ``10.5555/synthetic.<i>``;
  ``ids.pmid`` / ``ids.mag`` (where the real work has them): numbers of their own;
* ``title``/``display_name``: the real title with `` (<i>)`` appended;
* each author's ``display_name``: the real name and a number drawn from N / 2, so names repeat
  across works about as often as in a partition (authors ≈ 3 per work, many shared);
* ``referenced_works``: as many as the real work has (0–77, 22 on average), a quarter drawn
  uniformly from the partition's own works, the rest from 20·N works outside it with Zipf-like
  popularity (P(rank r) ∝ r^-1.1), as a partition's references mostly point elsewhere.

Each size runs in its own fresh Python process (so peak RSS is that run's alone): ``load`` (parse
into tables), then ``ingest`` into a new embedded store. Reported per size: seconds of each, peak
RSS after the load (``ru_maxrss``: the loader's high-water mark, interpreter and libraries
included) and after the ingest, and the tables' sizes. Peak RSS is compared with the input's
uncompressed size: a loader that kept the parsed works would need several times that.

Usage::

    .venv/bin/python benchmarks/openalex_import.py --sizes 50000 100000 400000 --out-json docs/results/openalex_import.json
    .venv/bin/python benchmarks/openalex_import.py --sizes 2000        # a quick check
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for folder in (ROOT, ROOT / "benchmarks"):  # run as a script from anywhere: the project and run_record import
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from run_record import commit as run_commit  # noqa: E402

SYNTHETIC_BASE = 5_000_000_000  # W-ids of the partition's works: above every real one (~4.4e9 in 2025)
EXTERNAL_BASE = 6_000_000_000  # W-ids of cited works outside the partition
IN_PARTITION = 0.25  # share of references to works of the same partition
EXTERNAL_POOL = 20  # works outside the partition that can be cited, per work in it
ZIPF = 1.1  # popularity exponent of cited works outside the partition


def templates(folder: Path) -> list[dict[str, Any]]:
    """The distinct real works of the sample folder (pages and single works), in file order."""
    works: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.json")):
        value = json.loads(path.read_text(encoding="utf-8"))
        for work in value.get("results", [value]):
            works.setdefault(work["id"], work)
    return list(works.values())


VARIED = ("id", "doi", "ids", "title", "display_name", "authorships", "referenced_works")  # set per synthetic work
NAME = "\u0000author name\u0000"  # placeholder for an author's name in a pre-serialised authorship


class _Template:
    """A real work serialised once, but for the fields each synthetic copy varies (fast to stamp out)."""

    def __init__(self, work: dict[str, Any]) -> None:
        rest = {k: v for k, v in work.items() if k not in VARIED}
        self.rest = json.dumps(rest, ensure_ascii=False)[1:-1]  # the members, without braces
        self.title = work.get("title") or work.get("display_name") or "Untitled"
        self.ids = work.get("ids") or {}
        self.n_references = len(work.get("referenced_works") or [])
        self.authorships: list[tuple[str, str, str]] = []  # (JSON before the name, the real name, JSON after)
        for authorship in work.get("authorships") or []:
            author = dict(authorship.get("author") or {})
            real = author.get("display_name") or "Anonymous"
            author["display_name"] = NAME
            text = json.dumps({**authorship, "author": author}, ensure_ascii=False)
            before, after = text.split(json.dumps(NAME, ensure_ascii=False))
            self.authorships.append((before, real, after))


def generate(path: Path, n: int, seed: int, folder: Path) -> dict[str, Any]:
    """Write the synthetic partition (see the module docstring); what it holds."""
    rng = np.random.default_rng(seed)
    real = [_Template(work) for work in templates(folder)]
    ranks = np.arange(1, EXTERNAL_POOL * n + 1, dtype=np.float64)
    cdf = np.cumsum(ranks**-ZIPF)
    cdf /= cdf[-1]
    popularity = rng.permutation(EXTERNAL_POOL * n)  # which external work has popularity rank r
    references = 0
    started = time.perf_counter()
    raw_bytes = 0
    with gzip.open(path, "wb", compresslevel=1) as out:  # level 1: 4x faster to write, as fast to read
        for i in range(n):
            template = real[i % len(real)]
            wid = f"https://openalex.org/W{SYNTHETIC_BASE + i}"
            doi = f"https://doi.org/10.5555/synthetic.{i}"
            ids = {"openalex": wid, "doi": doi}
            if "mag" in template.ids:
                ids["mag"] = str(SYNTHETIC_BASE + i)
            if "pmid" in template.ids:
                ids["pmid"] = f"https://pubmed.ncbi.nlm.nih.gov/{90_000_000 + i}"
            title = json.dumps(f"{template.title} ({i})", ensure_ascii=False)
            numbers = rng.integers(0, n // 2 + 1, len(template.authorships)).tolist()
            authorships = ", ".join(
                before + json.dumps(f"{name} {k}", ensure_ascii=False) + after
                for (before, name, after), k in zip(template.authorships, numbers)
            )
            k = template.n_references
            inside = rng.random(k) < IN_PARTITION
            others = rng.integers(0, n - 1, k)  # a work of the partition other than this one
            targets = np.where(
                inside,
                SYNTHETIC_BASE + others + (others >= i),
                EXTERNAL_BASE + popularity[np.minimum(np.searchsorted(cdf, rng.random(k)), len(cdf) - 1)],
            )
            cited = [f"https://openalex.org/W{t}" for t in dict.fromkeys(targets.tolist())]
            references += len(cited)
            text = (
                f'{{"id": "{wid}", "doi": "{doi}", "ids": {json.dumps(ids)}, "title": {title}, '
                f'"display_name": {title}, "authorships": [{authorships}], "referenced_works": {json.dumps(cited)}'
                + (", " + template.rest if template.rest else "")
                + "}\n"
            )
            line = text.encode("utf-8")
            raw_bytes += len(line)
            out.write(line)
    return {
        "works": n,
        "references": references,
        "templates": len(real),
        "uncompressed_bytes": raw_bytes,
        "gzip_bytes": path.stat().st_size,
        "generate_seconds": round(time.perf_counter() - started, 1),
    }


def _partition(path: Path, n: int, seed: int, folder: Path) -> dict[str, Any]:
    """The partition of ``n`` works at ``path``: reused when an earlier run with the same seed left it there."""
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        data: dict[str, Any] = json.loads(meta.read_text(encoding="utf-8"))
        if data.get("seed") == seed and data.get("works") == n and data.get("gzip_bytes") == path.stat().st_size:
            return data
    data = {**generate(path, n, seed, folder), "seed": seed}
    meta.write_text(json.dumps(data) + "\n", encoding="utf-8")
    return data


def _max_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def bare_parse(partition: Path) -> dict[str, Any]:
    """The ceiling: seconds to gunzip the partition and parse every line with orjson, nothing kept (one process)."""
    import zlib

    import orjson

    started = time.perf_counter()
    lines = 0
    stream = zlib.decompressobj(wbits=31)
    pending = b""
    with partition.open("rb") as raw:
        while chunk := raw.read(1 << 20):
            *complete, pending = (pending + stream.decompress(chunk)).split(b"\n")
            for line in complete:
                orjson.loads(line)
                lines += 1
    if pending.strip():
        orjson.loads(pending)
        lines += 1
    return {"lines": lines, "seconds": round(time.perf_counter() - started, 1)}


def child(partition: Path, db: Path, chunk_works: int, buffer_pool_mib: int = 0) -> dict[str, Any]:
    """One run: the partition into a new store; times, peak RSS and table sizes.

    ``chunk_works`` > 0: streamed, as ``citegraph ingest openalex`` does (``load_chunks`` +
    ``ingest_stream``), with the peak RSS recorded after each batch; 0: one batch (``load_with_report``,
    then ``ingest``), as before batches existed.
    """
    from graph import StoreConfig, ingest, ingest_stream, open_store
    from loaders import openalex

    baseline = _max_rss()
    ceiling = bare_parse(partition)
    load_before = os.getloadavg()[0]
    store = open_store(StoreConfig(db_path=db, buffer_pool_mib=buffer_pool_mib))
    if chunk_works:
        peaks: list[int] = []

        def batches() -> Any:
            for batch in openalex.load_chunks(partition, chunk_works):
                yield batch
                del batch  # as ingest_stream holds it: not while the next one is read
                peaks.append(_max_rss())  # the batch is written when the next one is asked for

        started = time.perf_counter()
        result = ingest_stream(store, "openalex", batches())
        seconds = time.perf_counter() - started
        timing: dict[str, Any] = {"chunk_works": chunk_works, "seconds": round(seconds, 1), "peak_rss_by_batch": peaks}
        tables = {name: count.records for name, count in result.tables.items()}
        report: dict[str, Any] = {}
    else:
        started = time.perf_counter()
        batch, loaded = openalex.load_with_report(partition)
        load_seconds = time.perf_counter() - started
        load_peak = _max_rss()
        tables = {name: len(frame) for name, frame in {**batch.nodes, **batch.rels}.items()}
        started = time.perf_counter()
        result = ingest(store, batch)
        ingest_seconds = time.perf_counter() - started
        seconds = load_seconds + ingest_seconds
        timing = {
            "chunk_works": 0,
            "load_seconds": round(load_seconds, 1),
            "ingest_seconds": round(ingest_seconds, 1),
            "peak_rss_load_bytes": load_peak,
            "seconds": round(seconds, 1),
        }
        report = vars(loaded)
    stats = store.stats()
    store.close()
    with open_store(StoreConfig(db_path=db, read_only=True)) as reader:
        stub_papers = int(reader.read_only_query("MATCH (p:Paper) WHERE p.stub RETURN count(*) AS n")[1][0][0])
    return {
        **timing,
        "bare_parse": ceiling,
        "load_average_1min": [round(load_before, 1), round(os.getloadavg()[0], 1)],
        "stub_papers": stub_papers,
        "rss_after_imports_bytes": baseline,
        "peak_rss_bytes": _max_rss(),
        "store_bytes": db.stat().st_size,
        "tables": tables,
        "rejected": result.rejected,
        "stored": result.stored,
        "report": report,
        "stats": stats,
    }


def machine() -> str:
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    with open("/proc/meminfo") as f:
        total = int(next(line for line in f if line.startswith("MemTotal")).split()[1]) / 1024**2
    return f"{os.cpu_count()}-core VM ({model}), {total:.1f} GiB, shared with other jobs; Python {platform.python_version()}"


def _gib(n: int) -> str:
    return f"{n / 1024**3:.2f} GiB"


def record(runs: dict[int, dict[str, Any]], command: str, commit: str | None) -> dict[str, Any]:
    rows = []
    for n, run in runs.items():
        system = f"{n:,} works"
        result = run["result"]
        values = [
            (
                "input (gzip / JSON)",
                f"{run['data']['gzip_bytes'] / 1024**3:.2f} / {_gib(run['data']['uncompressed_bytes'])}",
            ),
            ("references", run["data"]["references"]),
            ("papers (stubs)", f"{result['stats']['nodes']['Paper']:,} ({result['stub_papers']:,})"),
            ("CITES", result["stats"]["relationships"]["CITES"]),
            ("works per batch", result["chunk_works"] or "one batch"),
            ("load + ingest s", result["seconds"]),
            ("works/s", round(n / result["seconds"])),
            ("peak RSS", _gib(result["peak_rss_bytes"])),
        ]
        if "bare_parse" in result:
            ceiling = n / result["bare_parse"]["seconds"]
            values += [
                ("bare parse works/s (gzip + orjson)", round(ceiling)),
                ("ratio to bare parse", round(n / result["seconds"] / ceiling, 2)),
                ("load average (1 min) at start / end", " / ".join(map(str, result["load_average_1min"]))),
            ]
        peaks = result.get("peak_rss_by_batch")
        if peaks:
            half = peaks[len(peaks) // 2 - 1] if len(peaks) > 1 else peaks[0]
            values.append(("peak RSS after half the batches", _gib(half)))
        values.append(("store file", _gib(result["store_bytes"])))
        rows += [{"system": system, "metric": metric, "value": value} for metric, value in values]
    return {
        "capability": "ingest",
        "kind": "memory",
        "title": "OpenAlex import of a synthetic snapshot partition (real works' shape): time and peak memory",
        "command": command,
        "machine": machine(),
        "date": dt.date.today().isoformat(),
        "commit": commit,  # of the code measured: read when the run started
        "notes": [
            "Each size in a fresh process, into a new embedded store, as `citegraph ingest openalex` does it: "
            "loaders.openalex.load_chunks (a first pass reads every work's ids, the second parses batches of "
            "'works per batch' works) and graph.ingest.ingest_stream (each batch re-keyed, validated and written "
            "into a copy of the store renamed over it at the end). Peak RSS is the process's high-water mark "
            "(ru_maxrss), interpreter and libraries included; 'after half the batches' is that mark when half "
            "the batches are written (runs.*.result.peak_rss_by_batch has it after each batch).",
            "Works are copies of the 51 real works in formats/openalex with ids, titles, author names and "
            "references varied (benchmarks/openalex_import.py); a quarter of the references point inside the "
            "partition, the rest at 20·N outside works with Zipf popularity, which become stub papers.",
        ],
        "tables": [{"title": None, "row_header": "size", "baselines": [], "served": None, "rows": rows}],
        "runs": {str(n): run for n, run in runs.items()},
    }


def _before_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of an earlier record (``--before``), their sizes named ``before (<commit>): <size>``."""
    earlier = json.loads(path.read_text(encoding="utf-8"))
    rows = [row for table in earlier["tables"] for row in table["rows"] if not row["system"].startswith("before")]
    return [{**row, "system": f"before ({earlier['commit']}): {row['system']}"} for row in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50_000, 100_000, 400_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--samples",
        type=Path,
        default=Path(os.environ.get("CITEGRAPH_DATA", ROOT.parent / "shared" / "data")) / "formats" / "openalex",
        help="folder of real OpenAlex works to copy (default: $CITEGRAPH_DATA/formats/openalex)",
    )
    parser.add_argument("--workdir", type=Path, default=None, help="default: a temporary folder, removed afterwards")
    parser.add_argument("--out-json", type=Path, default=None)
    parser.add_argument(
        "--keep-partitions",
        action="store_true",
        help="keep each part_<N>.gz (and part_<N>.json, what it holds) in --workdir; a later run with the same "
        "--workdir, size and seed reuses it instead of writing it again",
    )
    parser.add_argument("--generate-only", action="store_true", help="write the partitions (kept) and stop")
    parser.add_argument(
        "--chunk-works", type=int, default=5_000, help="works per batch (0: one batch, as before streaming)"
    )
    parser.add_argument(
        "--buffer-pool-mib",
        type=int,
        default=0,
        help="the store's page cache (CITEGRAPH_BUFFER_POOL_MIB); 0: citegraph's default",
    )
    parser.add_argument(
        "--before",
        type=Path,
        default=None,
        help="an earlier record of this benchmark whose rows are kept in the table as 'before (<commit>)'",
    )
    parser.add_argument("--child", nargs=2, type=Path, help=argparse.SUPPRESS)  # partition, db
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(*args.child, args.chunk_works, args.buffer_pool_mib)))
        return 0

    command = "python benchmarks/openalex_import.py " + " ".join(sys.argv[1:])
    commit = run_commit(short=True)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="openalex_import_"))
    workdir.mkdir(parents=True, exist_ok=True)
    runs: dict[int, dict[str, Any]] = {}
    try:
        for n in args.sizes:
            partition = workdir / f"part_{n}.gz"
            data = _partition(partition, n, args.seed, args.samples)
            print(f"{n:,} works: {data}", flush=True)
            if args.generate_only:
                continue
            db = workdir / f"store_{n}.db"
            done = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--child",
                    str(partition),
                    str(db),
                    "--chunk-works",
                    str(args.chunk_works),
                    "--buffer-pool-mib",
                    str(args.buffer_pool_mib),
                ],
                capture_output=True,
                text=True,
            )
            if done.returncode:
                print(done.stderr, file=sys.stderr)
                return done.returncode
            result = json.loads(done.stdout.strip().splitlines()[-1])
            runs[n] = {"data": data, "result": result}
            (workdir / f"run_{n}.json").write_text(
                json.dumps(runs[n]) + "\n", encoding="utf-8"
            )  # kept if a later size dies
            print(
                f"  load + ingest {result['seconds']}s, peak RSS {_gib(result['peak_rss_bytes'])} "
                f"(by batch: {', '.join(_gib(b) for b in result.get('peak_rss_by_batch', []))}), "
                f"rejected {result['rejected']}, tables {result['tables']}",
                flush=True,
            )
            if not args.keep_partitions:
                partition.unlink()
                partition.with_suffix(".json").unlink(missing_ok=True)
            for leftover in workdir.glob(f"store_{n}.db*"):
                shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
        if args.out_json:
            args.out_json.parent.mkdir(parents=True, exist_ok=True)
            written = record(runs, command, commit)
            if args.before is not None:
                written["tables"][0]["rows"] += _before_rows(args.before)
            args.out_json.write_text(json.dumps(written, indent=2) + "\n", encoding="utf-8")
            print(f"wrote {args.out_json}")
        return 0
    finally:
        if args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
