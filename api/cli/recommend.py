"""``citegraph recommend``, ``citegraph eval recommend`` and ``citegraph train reranker``.

The work is done by :class:`gnn.recommend.service.RecommendationService`, :mod:`gnn.recommend.evaluate`
and :mod:`gnn.recommend.train`. ``train reranker`` saves the served reranker beside the index
(``<db>.index.reranker/``, :class:`graph.files.StoreFiles`); ``eval recommend --ablation`` trains the
same way but saves its models beside its report (``<report stem>.models/``), never over the served one.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import replace
from pathlib import Path

import torch

from api.cli import encoder as encoder_cli
from api.cli.common import index_dir, open_from_args, paper_keys, print_report, step_context, store_files
from api.paper_ids import resolve_paper_ids, unknown_ids_message
from api.pipeline import train as train_step
from api.pipeline.train import RERANKER_TRAINING, RerankerTraining, ablation_models_dir
from gnn.recommend import evaluate, train
from gnn.recommend.citances import QUERY_SOURCES
from gnn.recommend.examples import TrainSettings
from gnn.recommend.service import (
    DEFAULT_K,
    BatchQueries,
    RecommendationService,
    RecommendRequest,
    RecommendResponse,
    ServiceSettings,
    read_batch,
    write_ranked,
)
from gnn.rerank.lambdamart import LambdaMartSettings
from gnn.rerank.model import OBJECTIVES, RerankerSettings
from gnn.retrieval.index import IndexSettings, RetrievalIndex
from gnn.text.encoder import EncoderSettings, TextEncoder
from graph.errors import ConfigError, DataError, NotFoundError
from graph.files import StoreFiles, write_atomic
from graph.store import GraphStore

log = logging.getLogger("citegraph")
BATCH_K = 100  # recommendations per query in --batch mode


def _table(response: RecommendResponse) -> str:
    rows = [["#", "id", "title", "year", "score", "why"]]
    for rank, item in enumerate(response.items, start=1):
        title = (item.title or "")[:60]
        rows.append(
            [
                str(rank),
                item.paper_id,
                title,
                "" if item.year is None else str(item.year),
                f"{item.score:.4f}",
                item.why,
            ]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cmd_recommend(args: argparse.Namespace) -> int:
    logging.getLogger("bm25s").setLevel(logging.WARNING)  # its per-build debug line is noise on a CLI
    if sum(x is not None for x in (args.context, args.batch, args.draft)) != 1:
        raise ConfigError(
            'give a context ("... [CIT] ..."), --draft DRAFT.txt --position N, or --batch QUERIES.jsonl: one of the three'
        )
    draft = _read_draft(Path(args.draft), args.position) if args.draft else ()
    if args.batch and not args.out:
        raise ConfigError("--batch needs --out RANKED.jsonl, where the rankings go")
    # the index beside the store is updated when the store changed: open for writing only to add columns
    with open_from_args(args, read_only=True) as store:
        # Ids as the user's sources print them, resolved (or refused) before the index and encoder load.
        cited = tuple(paper_keys(store, args.cited, "--cited"))
        citing = paper_keys(store, [args.citing], "--citing")[0] if args.citing else None
        batch = _read_resolved_batch(store, args) if args.batch else None
        settings = ServiceSettings(candidate_sentences=args.candidate_sentences)
        service = RecommendationService.open(
            store, settings, index_dir=index_dir(args), progress=not args.quiet, build=True
        )
        try:
            if batch is not None:
                requests = batch.requests
                start = time.perf_counter()
                responses = []
                for begin in range(0, len(requests), args.batch_size):
                    responses += service.recommend_many(requests[begin : begin + args.batch_size])
                seconds = time.perf_counter() - start
                written = write_ranked(Path(args.out), responses)
                rate = written / seconds if seconds > 0 else float("inf")
                print(f"{written} queries ranked into {args.out} ({seconds:.1f}s, {rate:.1f} queries/s)")
                if batch.unresolved:
                    queries = len({u.origin for u in batch.unresolved})
                    print(
                        f"{len(batch.unresolved)} paper id(s) of {queries} quer{'y' if queries == 1 else 'ies'} named no "
                        f"stored paper and were left out of them (listed in {rejects_path(Path(args.out))})"
                    )
                return 0
            request = RecommendRequest(
                context=args.context or "",
                draft=draft,
                position=args.position if draft else None,
                title=args.title,
                abstract=args.abstract,
                cited_ids=cited,
                citing_paper_id=citing,
                year=args.year,
                k=args.k or DEFAULT_K,
            )
            response = service.recommend(request)
            if args.json:
                print(json.dumps([item.__dict__ for item in response.items], indent=2, default=str))
            else:
                print(_table(response))
            return 0
        finally:
            service.close()


def rejects_path(out: Path) -> Path:
    """Where ``recommend --batch --on-error skip`` lists the ids it left out: ``<out stem>.rejects.jsonl``."""
    return out.with_name(f"{out.stem}.rejects.jsonl")


SHOWN_ON_STDERR = 20  # unresolved ids printed one per line; the rest are in the rejects file only


def _read_resolved_batch(store: GraphStore, args: argparse.Namespace) -> BatchQueries:
    """``--batch`` read with its paper ids resolved as ``--citing`` / ``--cited`` are (one lookup for the file).

    An id that names no stored paper stops the command (``--on-error fail``, the default), naming its file and
    line, before anything is ranked; with ``--on-error skip`` its query is ranked without it, and each such id is
    printed on stderr and written to :func:`rejects_path` (``{"origin", "query_id", "field", "id"}`` per line).
    """
    path = Path(args.batch)
    batch = read_batch(path, k=args.k or BATCH_K, resolve=lambda ids: resolve_paper_ids(store, ids))
    rejects = rejects_path(Path(args.out))
    if not batch.unresolved:
        rejects.unlink(missing_ok=True)  # a list from an earlier run would describe this one wrongly
        return batch
    first = batch.unresolved[0]
    if args.on_error == "fail":
        others = batch.unresolved[1:]
        more = (
            f"; {len(others)} more id(s) resolve to nothing too ({', '.join(u.origin for u in others[:5])}"
            f"{', …' if len(others) > 5 else ''})"
            if others
            else ""
        )
        raise NotFoundError(
            unknown_ids_message(f"{first.origin}: `{first.field}`", [first.given], store)
            + f"{more}. Nothing was ranked; fix the ids, or rerun with --on-error skip to rank those queries "
            f"without them (the ids left out are listed on stderr and in {rejects})"
        )
    rejects.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(rejects, "".join(json.dumps(u.as_record()) + "\n" for u in batch.unresolved))
    for u in batch.unresolved[:SHOWN_ON_STDERR]:
        print(
            f"{u.origin}: `{u.field}` {u.given!r} names no stored paper; left out of query {u.query_id!r}",
            file=sys.stderr,
        )
    if len(batch.unresolved) > SHOWN_ON_STDERR:
        print(f"… and {len(batch.unresolved) - SHOWN_ON_STDERR} more in {rejects}", file=sys.stderr)
    return batch


def _read_draft(path: Path, position: int | None) -> tuple[str, ...]:
    """A draft for manuscript mode: one sentence per non-blank line of ``path``."""
    if not path.is_file():
        raise ConfigError(f"--draft {path}: no such file; give a text file with one sentence per line")
    sentences = tuple(line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    if not sentences:
        raise DataError(f"--draft {path}: the file has no sentences; write one sentence per line")
    if position is None or not 0 <= position < len(sentences):
        raise ConfigError(
            f"--draft {path} has {len(sentences)} sentences: --position must be the (0-based) line of the sentence "
            f"that needs the citation, 0 to {len(sentences) - 1}; got {position}"
        )
    return sentences


def query_source(args: argparse.Namespace, store: GraphStore) -> str:
    """``--queries``, else ``scisummnet`` when the store holds ScisummNet citing sentences, else ``store``."""
    return train_step.query_source(args.queries, store)


def cmd_eval(args: argparse.Namespace) -> int:
    settings = evaluate.RecommendEvalSettings(
        n=args.n, tune_queries=args.tune_queries, seed=args.seed, limit=args.limit
    )
    with open_from_args(args, read_only=True) as store:
        encoder = TextEncoder(EncoderSettings.from_env(served=store_files(store, args).served_encoder))
        try:
            settings = replace(settings, queries=query_source(args, store))
            report = evaluate.run_evaluation(store, encoder, settings, progress=not args.quiet)
        finally:
            encoder.close()
    return print_report(report, Path(args.out), evaluate.report_markdown, "written")


def cmd_eval_reranker(args: argparse.Namespace) -> int:
    """``citegraph eval reranker``: the saved scorer on the current store's validation and test queries."""
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    torch.set_num_threads(1)  # as `train reranker`: small matrices
    with open_from_args(args, read_only=True) as store:
        files = store_files(store, args)
        encoder = TextEncoder(EncoderSettings.from_env(served=files.served_encoder))
        try:
            folder = Path(args.model) if args.model else files.reranker
            if files.index is None or folder is None:
                raise ConfigError("pass --index-dir and --model: a server store has no folder beside it for the index")
            settings = TrainSettings(limit=args.limit, seed=args.seed, queries=query_source(args, store))
            index, _ = RetrievalIndex.open(store, IndexSettings(), path=files.index, cache=encoder)
            report = train.evaluate_saved_scorer(
                store,
                encoder,
                index,
                folder,
                settings=settings,
                cache_dir=StoreFiles().reranker_examples,
                progress=not args.quiet,
            )
        finally:
            encoder.close()
    return print_report(report, Path(args.out), train.report_markdown, "report")


def reranker_settings(args: argparse.Namespace) -> RerankerTraining:
    """``train reranker``'s flags (and ``eval recommend --ablation``'s, which takes the defaults of the rest) as the
    step registry's settings; checked before the store opens."""
    return RerankerTraining(
        objective=args.objective,
        limit=args.limit,
        queries=args.queries,
        seed=args.seed,
        lambdamart=not getattr(args, "no_lambdamart", False),
        mart_seeds=getattr(args, "mart_seeds", None),
        plain_trees=not getattr(args, "no_plain_trees", False),
        latest_folds=getattr(args, "latest_folds", None),
        mart_learning_rate=getattr(args, "mart_learning_rate", None),
        mart_patience=getattr(args, "mart_patience", None),
        epoch_patience=getattr(args, "epoch_patience", None),
        test=not getattr(args, "no_test", False),
        example_cache=not getattr(args, "no_example_cache", False),
        out=args.out,
        index_dir=getattr(args, "index_dir", None),
        ablation=bool(getattr(args, "ablation", False)),
    )


def cmd_train_reranker(args: argparse.Namespace) -> int:
    """``citegraph train reranker`` (and ``eval recommend --ablation``): build examples, train, save, report
    (the step registry's action, :mod:`api.pipeline.train`)."""
    settings = reranker_settings(args)
    context = step_context(args)
    RERANKER_TRAINING.run(context, settings)
    return 0


def cmd_eval_dispatch(args: argparse.Namespace) -> int:
    return cmd_train_reranker(args) if args.ablation else cmd_eval(args)


def add_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``recommend``, ``eval`` and ``train``."""
    _add_recommend(sub)
    _add_eval(sub)
    _add_train(sub)


def _add_recommend(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    candidate_sentences = ServiceSettings().candidate_sentences
    p = sub.add_parser("recommend", help="recommend citations for a context (or a batch of them)")
    p.add_argument("context", nargs="?", help="the citation context; write [CIT] where the citation goes")
    p.add_argument("--title", help="the citing paper's title (global information)")
    p.add_argument("--abstract", help="the citing paper's abstract")
    p.add_argument("--cited", action="append", default=[], metavar="ID", help="a paper already cited (repeatable)")
    p.add_argument(
        "--citing", metavar="ID", help="the citing paper's id, when it is in the graph (fills title, abstract, year)"
    )
    p.add_argument("--year", type=int, help="the citing paper's year: later papers are not recommended")
    p.add_argument(
        "--draft",
        metavar="DRAFT.txt",
        help="manuscript mode: the whole draft, one sentence per line (instead of a context); with --position",
    )
    p.add_argument(
        "--position", type=int, help="with --draft: the 0-based line of the sentence that needs the citation"
    )
    p.add_argument(
        "--candidate-sentences",
        type=int,
        default=candidate_sentences,
        metavar="N",
        help="manuscript mode: match full-text candidates as title + abstract + N sampled body sentences "
        f"(default {candidate_sentences})",
    )
    p.add_argument("-k", type=int, help=f"recommendations per query (default {DEFAULT_K}; {BATCH_K} with --batch)")
    p.add_argument(
        "--batch",
        metavar="QUERIES.jsonl",
        help='one query per line: {"id", "context", "citing_paper_id"?, "title"?, "abstract"?, "cited_ids"?} '
        '(manuscript mode: "draft": [sentences], "position": N instead of "context")',
    )
    p.add_argument(
        "--out", metavar="RANKED.jsonl", help='with --batch: {"id", "ranked": [{"paper_id", "score"}]} per line'
    )
    p.add_argument("--batch-size", type=int, default=64, help="queries per service call in --batch mode")
    p.add_argument(
        "--on-error",
        choices=["fail", "skip"],
        default="fail",
        help="with --batch, a citing_paper_id or cited_ids entry that names no stored paper: fail (default) stops "
        "before ranking, naming the file and line; skip ranks the query without it, lists it on stderr and in "
        "<out stem>.rejects.jsonl, and counts the ids left out in the summary",
    )
    p.add_argument("--index-dir", help="where the retrieval index lives (default: <db>.index beside the store)")
    p.add_argument("--json", action="store_true", help="print the recommendations as JSON")
    p.set_defaults(func=cmd_recommend)


def _add_eval(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    defaults = evaluate.RecommendEvalSettings()
    p = sub.add_parser("eval", help="evaluation harnesses (recommend: citation recommendation on held-out citances)")
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    q = kinds.add_parser(
        "recommend", help="every retrieval system on the time-split citances (ScisummNet or the store's own), one table"
    )
    q.add_argument("--out", default="var/eval/recommend.json", help="report path (.json; the .md goes beside it)")
    q.add_argument(
        "--n",
        type=int,
        default=defaults.n,
        help="prefetch depth of the retrieval table (its recall@n; the service prefetches 300)",
    )
    q.add_argument(
        "--tune-queries",
        type=int,
        default=defaults.tune_queries,
        help="validation queries the parameter grids are scored on",
    )
    q.add_argument("--limit", type=int, help="evaluate only this many queries per split (a quick run)")
    _queries_argument(q)
    q.add_argument("--seed", type=int, default=defaults.seed)
    q.add_argument(
        "--ablation",
        action="store_true",
        help="the reranker's ablation instead: every objective, then without hyperbolic/taxonomy/co-citation/"
        "enricher/authors/title and names",
    )
    q.add_argument("--objective", help=argparse.SUPPRESS)
    q.add_argument("--index-dir", help="where the retrieval index lives (default: <db>.index beside the store)")
    q.set_defaults(func=cmd_eval_dispatch)
    r = kinds.add_parser(
        "reranker",
        help="the saved reranker (what recommend and serve load) on the store as it is now, beside the baselines",
    )
    r.add_argument("--out", default="var/eval/reranker_saved.json", help="report path (.json; the .md goes beside it)")
    r.add_argument("--model", help="the saved reranker's folder (default: <db>.index.reranker beside the store)")
    r.add_argument("--limit", type=int, help="evaluate only this many queries per split (a quick run)")
    _queries_argument(r)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--index-dir", help="where the retrieval index lives (default: <db>.index beside the store)")
    r.set_defaults(func=cmd_eval_reranker)


def _queries_argument(q: argparse.ArgumentParser) -> None:
    q.add_argument(
        "--queries",
        choices=sorted(QUERY_SOURCES),
        help="scisummnet: the ScisummNet citing sentences, split 2006-2009 / 2010 / 2011; store: every citing "
        "sentence of the store, split by its citing papers' years (test the latest ~15%%, validation the ~15%% "
        "before; docs/methods.md). Default: scisummnet when the store holds ScisummNet sentences, else store",
    )


def _add_train(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "train",
        help="train models on the store (reranker: the recommendation reranker; encoder: fine-tune the text encoder)",
    )
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    q = kinds.add_parser("reranker", help="train the reranker on the time split, save it beside the index, report")
    q.add_argument(
        "--objective",
        choices=OBJECTIVES,
        help="train only this objective (default: every objective; the one whose blend with LambdaMART, else whose "
        "neural model, has the best validation MRR is kept)",
    )
    q.add_argument("--limit", type=int, help="queries per split at most (a quick run)")
    _queries_argument(q)
    q.add_argument("--seed", type=int, default=TrainSettings().seed)
    q.add_argument(
        "--no-lambdamart",
        action="store_true",
        help="keep the neural reranker alone (default: also train LambdaMART and blend when validation says so)",
    )
    q.add_argument(
        "--mart-seeds",
        type=int,
        metavar="N",
        help="LambdaMART boosters with seeds --seed … --seed+N-1, their scores averaged (default: "
        f"LambdaMartSettings.bag, {LambdaMartSettings().bag})",
    )
    q.add_argument(
        "--no-plain-trees",
        action="store_true",
        help="skip the comparison row of LambdaMART over the features alone (what the default build does); "
        "the scorer saved is the same",
    )
    q.add_argument(
        "--latest-folds",
        type=int,
        metavar="N",
        help="train on the latest N training folds only (default: every fold; the default build: 1)",
    )
    q.add_argument(
        "--mart-learning-rate",
        type=float,
        default=LambdaMartSettings().learning_rate,
        help="LambdaMART's shrinkage (default %(default)s; the default build: 0.1, about half the trees)",
    )
    q.add_argument(
        "--mart-patience",
        type=int,
        default=LambdaMartSettings().patience,
        help="trees without a validation gain before LambdaMART stops (default %(default)s; the default build: 50)",
    )
    q.add_argument(
        "--epoch-patience",
        type=int,
        metavar="N",
        help=f"epochs without a better validation MRR before the neural model stops (default "
        f"{RerankerSettings().patience}; the default build: 2; the best epoch's weights are kept either way)",
    )
    q.add_argument(
        "--no-test",
        action="store_true",
        help="leave the test queries out (their columns stay empty): validation alone chooses and stops the "
        "model, so the default build skips what only the report reads",
    )
    q.add_argument(
        "--no-example-cache",
        action="store_true",
        help="do not keep the examples for the next run (about 1 GB on the bundled corpora; the default build "
        "leaves it out: it trains once)",
    )
    q.add_argument("--out", default="var/eval/reranker.json", help="report path (.json; the .md goes beside it)")
    q.add_argument("--index-dir", help="where the retrieval index lives (default: <db>.index beside the store)")
    q.set_defaults(func=cmd_train_reranker, ablation=False)
    encoder_cli.add_parser(kinds)


__all__ = [
    "ablation_models_dir",
    "add_commands",
    "cmd_eval",
    "cmd_recommend",
    "cmd_train_reranker",
    "reranker_settings",
]
