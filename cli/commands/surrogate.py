"""``mpiuq surrogate``: designs for any simulator and polynomial-chaos fits of its outputs.

``design`` writes a sparse-grid (``--level``) or random (``--random N``) design CSV plus a
``<csv>.json`` sidecar with the parameter box; ``run`` evaluates a Python model
(``module:function`` or ``file.py:function``) over a design CSV with a restartable HDF5
store and a progress bar; ``fit`` reads a design and an outputs CSV (one row per design
row, header = output names) and writes ``surrogate.h5``, ``surrogate.json`` and
``sensitivity.png`` into ``--out``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from mpiuq.commands.arguments import seed_argument
from mpiuq.runtime.progress import add_quiet_argument
from mpiuq.surrogate import (
    DesignProgress,
    ParameterBox,
    PolynomialChaos,
    SurrogateInputError,
    fit_pce,
    load_design_outputs,
    make_executor,
    random_design,
    run_design,
    save_pce,
    sparse_grid_design,
)
from mpiuq.surrogate.chaos.pce import MAX_ABS_OUTPUT
from mpiuq.surrogate.chaos.tables import (
    json_safe,
    read_design_sidecar,
    read_table_csv,
    sidecar_path,
    write_design_csv,
    write_table_csv,
)
from mpiuq.surrogate.design.design_store import discard_store
from mpiuq.surrogate.design.designs import RANDOM_METHODS
from mpiuq.surrogate.external_model import import_callable
from mpiuq.surrogate.store.json_text import write_json


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the ``surrogate`` sub-command and its ``design`` / ``fit`` actions."""
    p = sub.add_parser(
        "surrogate",
        help="sparse-grid designs and polynomial-chaos surrogates of any simulator",
        description="Build designs for any simulator and fit Legendre chaos surrogates.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)

    d = actions.add_parser("design", help="write a design CSV (and its .json box sidecar)")
    d.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=LOW:HIGH",
        required=True,
        help="a parameter and its range (repeat for each parameter, in column order)",
    )
    kind = d.add_mutually_exclusive_group(required=True)
    kind.add_argument("--level", type=int, help="Clenshaw-Curtis sparse-grid level (e.g. 4)")
    kind.add_argument("--random", type=int, metavar="N", help="N random validation points")
    d.add_argument("--seed", type=seed_argument, default=0, help="seed of --random (default 0)")
    d.add_argument(
        "--method",
        choices=RANDOM_METHODS,
        default="sobol",
        help="random design: scrambled Sobol', Latin hypercube or i.i.d. uniform",
    )
    d.add_argument("--csv", type=Path, required=True, help="output design CSV")
    d.set_defaults(handler=run_design_cmd)

    r = actions.add_parser(
        "run", help="evaluate a Python model over a design CSV (restartable, with progress)"
    )
    r.add_argument(
        "--model",
        required=True,
        metavar="MODULE:FUNC",
        help="batched model f(X[n, d]) -> Y[n, m]: 'package.module:func' or 'path/file.py:func'",
    )
    r.add_argument("--design", type=Path, required=True, help="design CSV (header = parameters)")
    r.add_argument("--store", type=Path, required=True, help="HDF5 checkpoint store (resumed)")
    r.add_argument("--outputs", type=Path, required=True, help="outputs CSV written at the end")
    r.add_argument("--output-names", help="comma-separated output names (default y0, y1, ...)")
    r.add_argument("--chunk-size", type=int, default=128, help="points per task (128)")
    r.add_argument("--workers", type=int, help="local worker processes (default: in process)")
    r.add_argument(
        "--scheduler", help="Dask: 'local' (LocalCluster of --workers) or tcp://HOST:PORT"
    )
    add_quiet_argument(r)
    r.add_argument(
        "--restart",
        action="store_true",
        help="discard the store (and its journal) and evaluate every point again",
    )
    r.set_defaults(handler=run_model_cmd)

    f = actions.add_parser("fit", help="fit a Legendre chaos to a design and its outputs")
    f.add_argument("--design", type=Path, required=True, help="design CSV (header = parameters)")
    f.add_argument(
        "--outputs",
        type=Path,
        required=True,
        help="outputs CSV: one row per design row, header = output names",
    )
    f.add_argument("--order", type=int, required=True, help="total polynomial order (e.g. 4)")
    f.add_argument("--out", type=Path, required=True, help="output directory")
    f.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=LOW:HIGH",
        help="parameter ranges (override the design's .json sidecar)",
    )
    f.add_argument(
        "--allow-rank-deficient",
        action="store_true",
        help="warn instead of failing when the design matrix is rank deficient",
    )
    f.add_argument("--no-plot", action="store_true", help="skip sensitivity.png")
    f.set_defaults(handler=run_fit_cmd)


def parse_param(spec: str) -> tuple[str, tuple[float, float]]:
    """Parse ``NAME=LOW:HIGH`` into ``(name, (low, high))``."""
    name, sep, rng = spec.partition("=")
    low, sep2, high = rng.partition(":")
    if not sep or not sep2 or not name.strip():
        raise SurrogateInputError(f"--param {spec!r}: expected NAME=LOW:HIGH, e.g. bw=1e9:4e9")
    try:
        return name.strip(), (float(low), float(high))
    except ValueError:
        raise SurrogateInputError(
            f"--param {spec!r}: LOW and HIGH must be numbers, got {low!r} and {high!r}"
        ) from None


def parse_box(specs: Sequence[str]) -> ParameterBox:
    """Build a box from repeated ``--param`` options (a repeated name is an error)."""
    bounds: dict[str, tuple[float, float]] = {}
    for spec in specs:
        name, pair = parse_param(spec)
        if name in bounds:
            raise SurrogateInputError(f"--param {name!r} given twice")
        bounds[name] = pair
    return ParameterBox.from_bounds(bounds)


def run_design_cmd(args: argparse.Namespace) -> int:
    """Execute ``mpiuq surrogate design``."""
    box = parse_box(args.param)
    meta: dict[str, Any]
    if args.level is not None:
        x = sparse_grid_design(box, args.level)
        meta = {"kind": "sparse_grid", "rule": "clenshaw_curtis", "level": args.level}
    else:
        x = random_design(box, args.random, args.seed, args.method)
        meta = {"kind": "random", "method": args.method, "seed": args.seed}
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    side = write_design_csv(args.csv, box, x, meta)
    print(f"wrote {x.shape[0]} points x {box.dim} parameters to {args.csv} (box in {side})")
    return 0


def load_model(spec: str) -> Callable[[np.ndarray], Any]:
    """Import ``package.module:func`` or ``path/to/file.py:func``.

    A file's folder is put on ``sys.path`` and the file imported as a module, so the
    function stays picklable by reference for worker processes
    (:func:`mpiuq.surrogate.external_model.import_callable`).
    """
    try:
        return import_callable(spec)  # type: ignore[return-value]
    except SurrogateInputError as exc:
        raise SurrogateInputError(f"--model: {exc}") from None


def drain_with_progress(
    reports: Iterator[DesignProgress], desc: str = "design", quiet: bool = False
) -> DesignProgress | None:
    """Consume a design-run progress stream, showing a tqdm bar; returns the last report."""
    from tqdm import tqdm

    last: DesignProgress | None = None
    bar: Any = None
    try:
        for report in reports:
            if bar is None and not quiet:
                bar = tqdm(total=report.n_total, initial=report.n_done, desc=desc, unit="pt")
            elif bar is not None:
                bar.update(report.n_done - bar.n)
            last = report
    finally:
        if bar is not None:
            bar.close()
    return last


def run_model_cmd(args: argparse.Namespace) -> int:
    """Execute ``mpiuq surrogate run``."""
    model = load_model(args.model)
    _, x = read_table_csv(args.design)
    names = None
    if args.output_names:
        names = tuple(n.strip() for n in args.output_names.split(","))
    if args.restart:
        discard_store(args.store)
    with make_executor(args.workers, args.scheduler) as executor:
        reports = run_design(
            model, x, args.store, executor, args.chunk_size, names, model_id=args.model
        )
        last = drain_with_progress(reports, desc=args.model, quiet=args.quiet)
    _, y, onames = load_design_outputs(args.store)
    write_table_csv(args.outputs, onames, y)
    computed = last.n_computed if last is not None else 0
    print(
        f"{x.shape[0]} points x {len(onames)} outputs in {args.outputs} "
        f"({computed} computed now, {x.shape[0] - computed} from {args.store})"
    )
    return 0


def resolve_box(design_path: Path, names: tuple[str, ...], specs: Sequence[str]) -> ParameterBox:
    """The fitting box: ``--param`` options, else the design sidecar, in design column order."""
    if specs:
        given = parse_box(specs)
        source = "--param"
    else:
        side = read_design_sidecar(design_path)
        if side is None:
            raise SurrogateInputError(
                f"no parameter bounds for {design_path}: pass --param NAME=LOW:HIGH for each "
                f"of {list(names)} or keep {sidecar_path(design_path)} written by "
                f"'mpiuq surrogate design'"
            )
        given, source = side, str(sidecar_path(design_path))
    if set(given.names) != set(names):
        raise SurrogateInputError(
            f"parameters from {source} {list(given.names)} do not match the design "
            f"columns {list(names)}"
        )
    bounds = given.bounds()
    return ParameterBox.from_bounds({n: bounds[n] for n in names})


def summary(pce: PolynomialChaos) -> dict[str, Any]:
    """The ``surrogate.json`` document of a fitted surrogate."""
    first, total = pce.sobol_first(), pce.sobol_total()
    names = pce.box.names

    def per_output(table: np.ndarray) -> dict[str, dict[str, float]]:
        return {
            o: {p: float(v) for p, v in zip(names, row, strict=True)}
            for o, row in zip(pce.output_names, table, strict=True)
        }

    return json_safe(
        {
            "parameters": [
                {"name": n, "lower": lo, "upper": hi} for n, (lo, hi) in pce.box.bounds().items()
            ],
            "n_train": int(pce.train_x.shape[0]),
            "n_terms": pce.n_terms,
            "order": pce.order,
            "rank": pce.rank,
            "outputs": list(pce.output_names),
            "loo_rel_error": dict(zip(pce.output_names, pce.loo_rel_error, strict=True)),
            "loo_rmse": dict(zip(pce.output_names, pce.loo_rmse, strict=True)),
            "mean": dict(zip(pce.output_names, pce.mean(), strict=True)),
            "variance": dict(zip(pce.output_names, pce.variance(), strict=True)),
            "sobol_first": per_output(first),
            "sobol_total": per_output(total),
        }
    )


def run_fit_cmd(args: argparse.Namespace) -> int:
    """Execute ``mpiuq surrogate fit``."""
    pnames, x = read_table_csv(args.design)
    onames, y = read_table_csv(args.outputs, max_abs=MAX_ABS_OUTPUT)
    if x.shape[0] != y.shape[0]:
        raise SurrogateInputError(
            f"{args.outputs} has {y.shape[0]} rows but {args.design} has {x.shape[0]}; "
            f"expected one output row per design row"
        )
    box = resolve_box(args.design, pnames, args.param)
    policy: Literal["raise", "warn"] = "warn" if args.allow_rank_deficient else "raise"
    pce = fit_pce(x, y, box, args.order, onames, on_rank_deficiency=policy)
    args.out.mkdir(parents=True, exist_ok=True)
    save_pce(pce, args.out / "surrogate.h5")
    doc = summary(pce)
    write_json(args.out / "surrogate.json", doc)
    if not args.no_plot:
        from mpiuq.surrogate.plots import save_sensitivity_heatmap

        save_sensitivity_heatmap(
            pce.sobol_total(), pce.output_names, box.names, args.out / "sensitivity.png"
        )
    print(
        f"fitted order {pce.order} ({pce.n_terms} terms, rank {pce.rank}) to "
        f"{x.shape[0]} points x {len(onames)} outputs -> {args.out}"
    )
    width = max(len(o) for o in onames)
    for name, rel in zip(onames, pce.loo_rel_error, strict=True):
        print(f"  {name:<{width}}  LOO error / std = {rel:.3g}")
    return 0
