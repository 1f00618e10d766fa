r"""``compute hyperbolic`` on a CUDA GPU beside the CPU: the class layout, the closed-form gradient, h_θ.

The problem is the one ``compute hyperbolic`` trains on, without a store: ``--export STORE`` writes the
joint taxonomy of a store (AcmClass id and scheme, ArxivCategory codes, BROADER and MAPS_TO, as
:func:`gnn.hyperbolic.compute.read_taxonomy` reads and sorts them) and the classes' ``fused`` vectors to
one small ``.npz`` (``--taxonomy``), with the hash of the joint hierarchy built from it
(:func:`gnn.hyperbolic.embedding.hierarchy_hash`). A run reads that file, rebuilds the hierarchy with
:func:`gnn.hyperbolic.hierarchy.taxonomy_hierarchy` and refuses to go on when the hash differs, so it
trains on exactly the store's problem; it needs torch, numpy, pandas and geoopt, and no graph database
(a lent GPU machine).

For each device of ``--devices`` (in that order), each step synchronised before its clock stops:

* **class layout**: :func:`gnn.hyperbolic.embedding.train_embedding` with the settings of
  ``compute hyperbolic`` (:class:`gnn.hyperbolic.compute.HyperbolicSettings`: Sarkar's tree
  initialisation, ``--burn-in`` epochs at a tenth of the rate, at most ``--epochs`` epochs, stopping
  once ``window`` epochs lower the mean loss by less than ``tolerance``; the store's 16 dimensions):
  seconds (the tree initialisation on the CPU included, as in the step), epochs, and the reconstruction
  of the joint hierarchy and of the ACM 1998 tree from the trained points (MAP, mean rank);
* **gradient check** in float64 on that device: ``torch.autograd.gradcheck`` of
  :func:`gnn.hyperbolic.poincare.pairwise_dist` (closed-form backward) on small random batches at
  curvature -1 and -0.5, and its gradient against autograd's through the same formula
  (:func:`autograd_pairwise_dist`, the code of ``poincare.pairwise_dist`` before commit 1f44225) on two
  [n, n] cases: the exact-softmax loss of the class layout at the layout just trained (points up to
  1e-10 from the boundary allowed, x = y, so the diagonal's clamp is exercised), and random points (norms up to
  0.999) against random points under a random upstream gradient;
* **loss step**: the exact-softmax loss of one epoch (forward and backward, no optimiser) at the
  trained layout, median of ``--repeats`` runs after a warm-up, with the closed-form gradient and with
  autograd's;
* **h_θ**: :func:`gnn.hyperbolic.map.train_hyperbolic_map` for ``--map-steps`` steps (default settings
  otherwise) on the real inputs ``compute hyperbolic`` gives it: the fused vectors of the classes that
  have one (the joint hierarchy without its virtual nodes), from the exported file. Seconds, seconds
  per step, the mean loss of the last steps and the ACM 1998 MAP of h_θ's points after those steps
  (not the 3,000-step default, so not the figure of docs/results/hyperbolic_map.json).

``--before FILE`` (``git show 1f44225~1:gnn/hyperbolic/poincare.py``): the class layout is also trained
with that module's ``pairwise_dist`` (autograd's gradient) on each device of ``--before-devices``.

On CUDA a warm-up (the context, the kernels of one small forward and backward) runs before anything is
timed; its seconds are recorded apart. The record (``--out``, capability ``hyperbolic``, kind ``speed``)
is rewritten after each device, so a run stopped by its time limit keeps what it finished.

Usage::

    # once, where a store is (read only): the joint taxonomy and the fused vectors, about 4 MB
    python benchmarks/hyperbolic_device.py --export /tmp/prof/citegraph.db --taxonomy .gpu/hyperbolic_taxonomy.npz
    # on the GPU machine
    python benchmarks/hyperbolic_device.py --taxonomy .gpu/hyperbolic_taxonomy.npz --devices cuda,cpu \
        --before .gpu/poincare_before.py --out $OUT/hyperbolic_device.json
    # a dry run on the CPU (seconds)
    python benchmarks/hyperbolic_device.py --taxonomy .gpu/hyperbolic_taxonomy.npz --devices cpu --epochs 3 \
        --burn-in 2 --map-steps 3 --grad-n 300 --repeats 1 --threads 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from run_record import commit, load_module, run_record, write_json  # noqa: E402

import gnn.hyperbolic.embedding as embedding_module  # noqa: E402
from gnn.hyperbolic import poincare  # noqa: E402
from gnn.hyperbolic.compute import (  # noqa: E402
    HyperbolicSettings,
    TaxonomyTables,
    acm1998_reconstruction,
    fused_class_hierarchy,
    read_taxonomy,
)
from gnn.hyperbolic.embedding import PoincareEmbeddingSettings, hierarchy_hash, initial_points, train_embedding  # noqa: E402
from gnn.hyperbolic.hierarchy import Hierarchy, Reconstruction, reconstruction, taxonomy_hierarchy  # noqa: E402
from gnn.hyperbolic.map import MapSettings, train_hyperbolic_map  # noqa: E402

DIM = 16  # the store's poincare size (CITEGRAPH_POINCARE_DIM's default), what `compute hyperbolic` trains in

# the taxonomy file ---------------------------------------------------------------------------------


def joint_hierarchy(tables: TaxonomyTables) -> Hierarchy:
    """The joint hierarchy of ``tables`` as ``compute hyperbolic`` builds it."""
    return taxonomy_hierarchy(
        tables.acm[["id", "scheme"]], tables.arxiv["code"].tolist(), tables.broader, tables.maps_to
    )


def _vectors(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """A column of optional vectors as a float64 matrix (zeros where absent) and the mask of present rows."""
    present = column.notna().to_numpy()
    size = next((len(v) for v in column[present]), 0)
    matrix = np.zeros((len(column), size), dtype=np.float64)
    for row in np.flatnonzero(present):
        matrix[row] = np.asarray(column.iloc[row], dtype=np.float64)
    return matrix, present


def export_taxonomy(store_path: Path, out: Path) -> None:
    """Write the store's joint taxonomy and fused vectors to ``out`` (module docstring); the store is only read."""
    from graph import StoreConfig, open_store  # here only: a run from the file needs no graph database

    with open_store(StoreConfig.from_env(db_path=store_path, read_only=True)) as store:
        tables = read_taxonomy(store)
    if tables.acm["scheme"].isna().any():
        raise SystemExit(f"{store_path}: AcmClass nodes without a scheme; this file format does not keep them")
    acm_fused, acm_has = _vectors(tables.acm["fused"])
    arxiv_fused, arxiv_has = _vectors(tables.arxiv["fused"])
    # fused vectors stored as float32 where that loses nothing (the store's own precision), else float64
    as32 = [m.astype(np.float32) for m in (acm_fused, arxiv_fused)]
    exact = all(np.array_equal(a.astype(np.float64), m) for a, m in zip(as32, (acm_fused, arxiv_fused)))
    acm_out, arxiv_out = as32 if exact else (acm_fused, arxiv_fused)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        out,
        acm_id=np.asarray(tables.acm["id"], dtype=str),
        acm_scheme=np.asarray(tables.acm["scheme"], dtype=str),
        acm_fused=acm_out,
        acm_has_fused=acm_has,
        arxiv_code=np.asarray(tables.arxiv["code"], dtype=str),
        arxiv_fused=arxiv_out,
        arxiv_has_fused=arxiv_has,
        broader_source=np.asarray(tables.broader["source"], dtype=str),
        broader_target=np.asarray(tables.broader["target"], dtype=str),
        maps_source=np.asarray(tables.maps_to["source"], dtype=str),
        maps_target=np.asarray(tables.maps_to["target"], dtype=str),
        hierarchy_hash=np.asarray(hierarchy_hash(joint_hierarchy(tables))),
    )
    print(
        f"{out}: {len(tables.acm)} ACM classes ({int(acm_has.sum())} with fused), {len(tables.arxiv)} arXiv categories "
        f"({int(arxiv_has.sum())} with fused), {len(tables.broader)} BROADER, {len(tables.maps_to)} MAPS_TO; "
        f"fused as {'float32' if exact else 'float64'}; {out.stat().st_size / 2**20:.1f} MiB"
    )


def load_taxonomy(path: Path) -> tuple[TaxonomyTables, Hierarchy]:
    """The tables and joint hierarchy of a file :func:`export_taxonomy` wrote, checked against its hash."""
    data = np.load(path)  # string and number arrays only: no pickle

    def optional(matrix: np.ndarray, present: np.ndarray) -> list[np.ndarray | None]:
        return [np.asarray(row, dtype=np.float64) if has else None for row, has in zip(matrix, present)]

    acm = pd.DataFrame(
        {
            "id": data["acm_id"].tolist(),
            "scheme": data["acm_scheme"].tolist(),
            "fused": optional(data["acm_fused"], data["acm_has_fused"]),
            "poincare": None,
        }
    )
    arxiv = pd.DataFrame(
        {
            "code": data["arxiv_code"].tolist(),
            "fused": optional(data["arxiv_fused"], data["arxiv_has_fused"]),
            "poincare": None,
        }
    )
    tables = TaxonomyTables(
        acm=acm,
        arxiv=arxiv,
        broader=pd.DataFrame({"source": data["broader_source"].tolist(), "target": data["broader_target"].tolist()}),
        maps_to=pd.DataFrame({"source": data["maps_source"].tolist(), "target": data["maps_target"].tolist()}),
        in_category=pd.DataFrame({"source": [], "target": [], "score": [], "inferred": []}),
    )
    hierarchy = joint_hierarchy(tables)
    expected = str(data["hierarchy_hash"])
    if hierarchy_hash(hierarchy) != expected:
        raise SystemExit(f"{path}: the joint hierarchy built from it does not hash to {expected}; export it again")
    return tables, hierarchy


# timing ------------------------------------------------------------------------------------------


def synchronise(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_ms(run: Callable[[], object], device: torch.device, repeats: int) -> tuple[float, list[float]]:
    """Median milliseconds of ``repeats`` runs after one warm-up, and every time (the warm-up's first)."""
    times = []
    for _ in range(repeats + 1):
        synchronise(device)
        start = time.perf_counter()
        run()
        synchronise(device)
        times.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(times[1:]), 3), [round(t, 3) for t in times]


def warm_up(device: torch.device) -> float:
    """Seconds to make ``device`` ready: on CUDA the context and the kernels of one small forward and backward."""
    synchronise(device)
    start = time.perf_counter()
    x = (torch.rand(64, DIM, dtype=torch.float64, device=device) - 0.5) * 0.1
    x.requires_grad_(True)
    poincare.pairwise_dist(x, x).sum().backward()
    autograd_pairwise_dist(x, x).sum().backward()
    synchronise(device)
    return time.perf_counter() - start


# the class layout ----------------------------------------------------------------------------------


def _reconstructions(
    tables: TaxonomyTables, hierarchy: Hierarchy, points: torch.Tensor
) -> tuple[Reconstruction, Reconstruction]:
    """The joint hierarchy's and the ACM 1998 tree's reconstruction from ``points`` (float64 CPU, node order)."""
    joint = reconstruction(poincare.pairwise_dist(points, points).numpy(), hierarchy)
    acm = acm1998_reconstruction(tables, pd.Series(list(points.numpy()), index=list(hierarchy.names)))
    if acm is None:
        raise SystemExit("the taxonomy has no ACM 1998 classes; export a store with the taxonomy ingested")
    return joint, acm


def class_layout(
    tables: TaxonomyTables,
    hierarchy: Hierarchy,
    settings: PoincareEmbeddingSettings,
    device: torch.device,
    before: Any = None,
) -> tuple[dict[str, Any], torch.Tensor]:
    """Train the layout on ``device`` (with ``before``'s pairwise_dist when given); figures and the points."""
    if before is not None:
        embedding_module.poincare = before  # the training's distance (and projection)
    try:
        synchronise(device)
        trained = train_embedding(hierarchy, replace(settings, device=str(device)), progress=False)
    finally:
        embedding_module.poincare = poincare
    joint, acm = _reconstructions(tables, hierarchy, trained.points)
    refined = trained.losses[settings.burn_in :]
    return {
        "seconds": round(trained.seconds, 3),
        "epochs": trained.epochs,
        "epochs_with_burn_in": len(trained.losses),
        "stopped_by_convergence": trained.epochs < settings.epochs,
        "final_loss": round(refined[-1], 6) if refined else None,
        "joint_map": round(joint.map, 4),
        "joint_mean_rank": round(joint.mean_rank, 3),
        "acm1998_map": round(acm.map, 4),
        "acm1998_mean_rank": round(acm.mean_rank, 3),
    }, trained.points


# the gradient ----------------------------------------------------------------------------------------


def autograd_pairwise_dist(x: torch.Tensor, y: torch.Tensor, *, c: float = 1.0) -> torch.Tensor:
    r""":func:`gnn.hyperbolic.poincare.pairwise_dist`'s formula with autograd's gradient (the module before 1f44225).

    .. math::
        d_c(x, y) = \frac{1}{\sqrt c}\operatorname{arcosh}\Bigl(1 + \frac{2c\,\|x - y\|^2}{(1 - c\|x\|^2)(1 - c\|y\|^2)}\Bigr)
    """
    diff2 = torch.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist").pow(2)  # [n, m]
    alpha = (1 - c * x.pow(2).sum(dim=-1)).clamp_min(poincare.MIN_NORM)  # [n]; MIN_NORM as in poincare
    beta = (1 - c * y.pow(2).sum(dim=-1)).clamp_min(poincare.MIN_NORM)  # [m]
    z = 2 * c * diff2 / (alpha.unsqueeze(-1) * beta.unsqueeze(-2))
    return torch.log1p(z + (z * (z + 2)).clamp_min(poincare.MIN_NORM**2).sqrt()) / c**0.5


def ball_points(n: int, dim: int, max_norm: float, generator: torch.Generator, device: torch.device) -> torch.Tensor:
    """``n`` float64 points with uniform random directions and norms uniform in [0, ``max_norm``]."""
    direction = torch.randn(n, dim, dtype=torch.float64, generator=generator)
    direction /= direction.norm(dim=-1, keepdim=True)
    norm = torch.rand(n, 1, dtype=torch.float64, generator=generator) * max_norm
    return (direction * norm).to(device)


def softmax_loss(hierarchy: Hierarchy, device: torch.device) -> Callable[[torch.Tensor], torch.Tensor]:
    """The exact-softmax loss of one full-batch epoch of the class layout as a function of the [n, n] distances
    (``embedding._pair_loss`` with ``negatives=None``; the pairs and negatives of ``train_embedding``)."""
    closure = torch.as_tensor(hierarchy.closure, device=device)
    pairs = torch.cat([closure, closure.flip(1)])
    related = torch.as_tensor(hierarchy.related(), device=device)
    related.fill_diagonal_(True)
    pairs = pairs[~related.all(dim=1)[pairs[:, 0]]]
    anchor, positive = pairs[:, 0], pairs[:, 1]

    def loss(d: torch.Tensor) -> torch.Tensor:
        log_s = torch.logsumexp((-d).masked_fill(related, float("-inf")), dim=1)
        return F.softplus(d[anchor, positive] + log_s[anchor]).mean()

    return loss


def _compare(ours: list[torch.Tensor], theirs: list[torch.Tensor]) -> dict[str, float]:
    """Max abs difference, max |autograd gradient|, and the largest elementwise relative difference over the
    elements whose autograd gradient is at least 1e-8 of the largest (below that, rounding of a sum)."""
    diff = max(float((a - b).abs().max()) for a, b in zip(ours, theirs))
    scale = max(float(b.abs().max()) for b in theirs)
    rel = 0.0
    for a, b in zip(ours, theirs):
        big = b.abs() >= 1e-8 * scale
        if big.any():
            rel = max(rel, float(((a - b).abs()[big] / b.abs()[big]).max()))
    return {"max_abs_diff": diff, "max_abs_grad": scale, "max_rel_diff": rel}


def gradient_checks(
    hierarchy: Hierarchy, layout: torch.Tensor, device: torch.device, n: int, repeats: int, seed: int
) -> dict[str, Any]:
    """gradcheck on small batches, closed form against autograd on two [n, n] cases, the loss step's time."""
    generator = torch.Generator().manual_seed(seed)
    checks: dict[str, Any] = {}
    for c in (1.0, 0.5):
        x = ball_points(6, 5, 0.9 / c**0.5, generator, device).requires_grad_(True)
        y = ball_points(7, 5, 0.9 / c**0.5, generator, device).requires_grad_(True)
        checks[f"gradcheck_c{c:g}"] = bool(
            torch.autograd.gradcheck(
                lambda a, b, c=c: poincare.pairwise_dist(a, b, c=c), (x, y), eps=1e-6, atol=1e-5, raise_exception=False
            )
        )

    # the class layout's loss at the trained layout (x = y: the diagonal's clamp too)
    points = layout[:n].to(device)
    sub = hierarchy if n >= len(hierarchy) else hierarchy.subset(np.arange(len(hierarchy)) < n)[0]
    loss = softmax_loss(sub, device)
    grads = []
    for distance in (poincare.pairwise_dist, autograd_pairwise_dist):
        x = points.clone().requires_grad_(True)
        grads.append(torch.autograd.grad(loss(distance(x, x)), x)[0])
    checks["layout"] = _compare(grads[:1], grads[1:])
    with torch.no_grad():
        checks["layout"]["forward_max_abs_diff"] = float(
            (poincare.pairwise_dist(points, points) - autograd_pairwise_dist(points, points)).abs().max()
        )
    checks["layout"]["n"] = len(points)

    # random points against random points, random upstream gradient
    x0 = ball_points(len(points), DIM, 0.999, generator, device)
    y0 = ball_points(len(points), DIM, 0.999, generator, device)
    upstream = torch.randn(len(points), len(points), dtype=torch.float64, generator=generator).to(device)
    pairs = []
    for distance in (poincare.pairwise_dist, autograd_pairwise_dist):
        x, y = x0.clone().requires_grad_(True), y0.clone().requires_grad_(True)
        pairs.append(list(torch.autograd.grad(distance(x, y), (x, y), upstream)))
    checks["random"] = {**_compare(pairs[0], pairs[1]), "n": len(points)}

    # the loss step (forward and backward of one epoch's loss, no optimiser), each gradient
    step_ms: dict[str, float] = {}
    step_runs: dict[str, list[float]] = {}
    for name, distance in (("closed form", poincare.pairwise_dist), ("autograd", autograd_pairwise_dist)):
        x = points.clone().requires_grad_(True)

        def step(distance: Callable[..., torch.Tensor] = distance, x: torch.Tensor = x) -> None:
            x.grad = None
            loss(distance(x, x)).backward()

        step_ms[name], step_runs[name] = median_ms(step, device, repeats)
    checks["loss_step_ms"] = step_ms
    checks["loss_step_runs_ms"] = step_runs
    return checks


# h_θ ---------------------------------------------------------------------------------------------


def hyperbolic_map(
    tables: TaxonomyTables, hierarchy: Hierarchy, device: torch.device, steps: int, seed: int
) -> dict[str, Any]:
    """h_θ for ``steps`` steps on the classes' fused vectors, on ``device``."""
    classes, fused = fused_class_hierarchy(tables, hierarchy)
    settings = replace(MapSettings(), epochs=steps, seed=seed, device=str(device))
    synchronise(device)
    trained = train_hyperbolic_map(fused, classes, DIM, settings, progress=False)
    acm = acm1998_reconstruction(tables, pd.Series(list(trained.points), index=list(classes.names)))
    tail = trained.losses[-100:]
    return {
        "classes": len(classes),
        "input_dim": int(fused.shape[1]),
        "steps": steps,
        "seconds": round(trained.seconds, 3),
        "ms_per_step": round(trained.seconds / max(steps, 1) * 1000, 3),
        "mean_loss_last_100": round(float(np.mean(tail)), 5) if tail else None,
        "acm1998_map": round(acm.map, 4) if acm is not None else None,
    }


# the record --------------------------------------------------------------------------------------


def device_label(device: str, results: dict[str, Any]) -> str:
    if device.startswith("cuda"):
        return f"CUDA ({results['gpu']})"
    return f"CPU ({results['threads']} threads)"


def record_tables(setup: dict[str, Any], results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The record's tables from the per-device results."""
    layout_rows: list[dict[str, Any]] = []
    served = None
    baselines = []
    for device, res in results.items():
        for variant, key in (("", "layout"), (", autograd gradient (before 1f44225)", "layout_before")):
            if key not in res:
                continue
            system = device_label(device, res) + variant
            if device.startswith("cuda") and not variant:
                served = system
            else:
                baselines.append(system)
            row = res[key]
            per_epoch = (row["seconds"] - setup["init_seconds"]) / max(row["epochs_with_burn_in"], 1) * 1000
            layout_rows += [
                {"system": system, "metric": "seconds", "value": row["seconds"]},
                {"system": system, "metric": "epochs (after burn-in)", "value": row["epochs"]},
                {"system": system, "metric": "ms per epoch", "value": round(per_epoch, 1)},
                {"system": system, "metric": "joint MAP", "value": row["joint_map"]},
                {"system": system, "metric": "ACM 1998 MAP", "value": row["acm1998_map"]},
            ]
    grad_rows: list[dict[str, Any]] = []
    step_rows: list[dict[str, Any]] = []
    map_rows: list[dict[str, Any]] = []
    for device, res in results.items():
        label = device_label(device, res)
        if "gradient" in res:
            g = res["gradient"]
            grad_rows += [
                {"system": label, "metric": "gradcheck c=1", "value": g["gradcheck_c1"]},
                {"system": label, "metric": "gradcheck c=0.5", "value": g["gradcheck_c0.5"]},
                {"system": label, "metric": "layout: max abs diff", "value": f"{g['layout']['max_abs_diff']:.2e}"},
                {"system": label, "metric": "layout: max abs grad", "value": f"{g['layout']['max_abs_grad']:.2e}"},
                {"system": label, "metric": "layout: max rel diff", "value": f"{g['layout']['max_rel_diff']:.2e}"},
                {"system": label, "metric": "random: max rel diff", "value": f"{g['random']['max_rel_diff']:.2e}"},
            ]
            for name, ms in g["loss_step_ms"].items():
                step_rows.append({"system": f"{label}, {name}", "metric": "ms (median)", "value": ms})
        if "h_theta" in res:
            h = res["h_theta"]
            map_rows += [
                {"system": label, "metric": "seconds", "value": h["seconds"]},
                {"system": label, "metric": "ms per step", "value": h["ms_per_step"]},
                {"system": label, "metric": "mean loss, last 100 steps", "value": h["mean_loss_last_100"]},
                {"system": label, "metric": f"ACM 1998 MAP after {h['steps']} steps", "value": h["acm1998_map"]},
            ]
    nodes, dim = setup["nodes"], setup["dim"]
    tables = [
        {
            "title": f"Class layout of the joint taxonomy ({nodes:,} nodes, dim {dim}) as `compute hyperbolic` trains it: "
            f"tree initialisation, {setup['burn_in']} burn-in epochs, at most {setup['epochs']} epochs, stop at "
            f"W={setup['window']}, tol={setup['tolerance']:g}",
            "row_header": "device",
            "baselines": baselines,
            "served": served,
            "rows": layout_rows,
        }
    ]
    if grad_rows:
        n = next(iter(r["gradient"]["layout"]["n"] for r in results.values() if "gradient" in r))
        tables.append(
            {
                "title": f"Closed-form gradient of `pairwise_dist` against autograd's, float64 (gradcheck: 6x5 and "
                f"7x5 points; layout: the class loss's gradient at the trained layout, [{n}, {n}]; random: random "
                "points and upstream gradient)",
                "row_header": "device",
                "baselines": [],
                "served": None,
                "rows": grad_rows,
            }
        )
        tables.append(
            {
                "title": f"One epoch's exact-softmax loss, forward and backward (no optimiser), at the layout ([{n}, {n}])",
                "row_header": "device, gradient",
                "baselines": [],
                "served": None,
                "rows": step_rows,
            }
        )
    if map_rows:
        h = next(r["h_theta"] for r in results.values() if "h_theta" in r)
        tables.append(
            {
                "title": f"h_θ: {h['steps']} steps on the classes' fused vectors ({h['classes']:,} x {h['input_dim']}, "
                "from the store), default settings otherwise",
                "row_header": "device",
                "baselines": [],
                "served": None,
                "rows": map_rows,
            }
        )
    return tables


def main(argv: list[str] | None = None) -> int:
    defaults = HyperbolicSettings()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--taxonomy", type=Path, required=True, help="the .npz --export writes (and this reads)")
    parser.add_argument("--export", type=Path, help="a store to read the taxonomy from; writes --taxonomy and stops")
    parser.add_argument("--devices", default="cpu,cuda", help="comma-separated, run in this order")
    parser.add_argument("--epochs", type=int, default=defaults.epochs, help="the class layout's cap on epochs")
    parser.add_argument("--burn-in", type=int, default=defaults.burn_in)
    parser.add_argument("--tolerance", type=float, default=defaults.tolerance)
    parser.add_argument("--window", type=int, default=defaults.window)
    parser.add_argument("--map-steps", type=int, default=500, help="h_θ steps per device; 0: skip h_θ")
    parser.add_argument("--grad-n", type=int, default=0, help="size of the [n, n] gradient cases (0: every node)")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs of the loss step after a warm-up")
    parser.add_argument("--before", type=Path, help="an earlier gnn/hyperbolic/poincare.py to train the layout with")
    parser.add_argument("--before-devices", default="cuda", help="devices to train --before's layout on")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    if args.export:
        export_taxonomy(args.export, args.taxonomy)
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)

    tables, hierarchy = load_taxonomy(args.taxonomy)
    settings = replace(
        HyperbolicSettings(
            epochs=args.epochs, burn_in=args.burn_in, tolerance=args.tolerance, window=args.window, seed=args.seed
        ).embedding(DIM),
        device="cpu",
    )
    started = time.perf_counter()
    initial_points(hierarchy, settings)  # the tree initialisation, on the CPU whatever the device
    init_seconds = time.perf_counter() - started
    setup = {
        "nodes": len(hierarchy),
        "closure_pairs": len(hierarchy.closure),
        "hierarchy_hash": hierarchy_hash(hierarchy),
        "dim": DIM,
        "epochs": args.epochs,
        "burn_in": args.burn_in,
        "window": args.window,
        "tolerance": args.tolerance,
        "init_seconds": round(init_seconds, 3),
        "torch": torch.__version__,
    }
    print(f"# {setup}", flush=True)
    before = load_module(args.before, "poincare_before") if args.before else None
    before_devices = set(args.before_devices.split(",")) if before is not None else set()
    results: dict[str, dict[str, Any]] = {}
    layouts: dict[str, torch.Tensor] = {}
    report: dict[str, Any] = {
        "capability": "hyperbolic",
        "kind": "speed",
        "title": "`compute hyperbolic` on a CUDA GPU against the CPU: the class layout, its closed-form gradient, h_θ",
        **run_record("benchmarks/hyperbolic_device.py", args),
        "commit": commit(),
        "rank": 6,
        "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
        "setup": setup,
    }
    for name in args.devices.split(","):
        device = torch.device(name)
        res: dict[str, Any] = {
            "threads": torch.get_num_threads(),
            "gpu": torch.cuda.get_device_name(device) if device.type == "cuda" else None,
            "warm_up_seconds": round(warm_up(device), 3),
        }
        results[name] = res
        res["layout"], layouts[name] = class_layout(tables, hierarchy, settings, device)
        print(f"{name} layout: {res['layout']}", flush=True)
        if name in before_devices:
            res["layout_before"], _ = class_layout(tables, hierarchy, settings, device, before)
            print(f"{name} layout, autograd gradient (--before): {res['layout_before']}", flush=True)
        n = args.grad_n or len(hierarchy)
        res["gradient"] = gradient_checks(hierarchy, layouts[name], device, n, args.repeats, args.seed)
        print(f"{name} gradient: {res['gradient']}", flush=True)
        if args.map_steps:
            res["h_theta"] = hyperbolic_map(tables, hierarchy, device, args.map_steps, args.seed)
            print(f"{name} h_θ: {res['h_theta']}", flush=True)
        if len(layouts) > 1:
            first, *rest = layouts
            report["layout_max_abs_diff"] = {
                other: float((layouts[other] - layouts[first]).abs().max()) for other in rest
            }
        report["results"] = results
        report["tables"] = record_tables(setup, results)
        if args.out:
            write_json(args.out, report)
    print(f"# layouts' max abs difference to the first device's: {report.get('layout_max_abs_diff')}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
