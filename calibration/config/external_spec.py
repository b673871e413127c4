"""The ``[simulator]`` table of a campaign around an external simulator.

A campaign calibrates a user's own simulator when its ``[simulator]`` table names one::

    [simulator]
    callable = "my_model:simulate"      # f(X[n, d]) -> Y[n, m], module beside the campaign file
    # or: command = ["./run_sim.sh", "{input}", "{output}"]   (CSV in, CSV out; no shell)
    output_sizes = [1, 1024, 65536]     # message size of each output, in order
    # or, with several [[data]] tables, one list per data table label:
    # [simulator.output_sizes]
    # pingpong = [1, 1024, 65536]
    # send = [1, 1024]
    regime_max_bytes = [1024]           # optional regime breakpoints (discrepancy per regime)
    regime_names = ["small", "large"]
    max_simulator_runs = 1500           # optional run budget of the whole campaign
    batch_size = 1                      # parameter sets per call (and per executor task)
    timeout_s = 600                     # command only: wall-clock limit of one call

The outputs of a call are the values at ``output_sizes`` of every data table in turn
(the table's label order); a command writes them under the header of
:meth:`ExternalSpec.output_names`. The data's sizes must be among them.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mpiuq.calibration.config.limits import MAX_MESSAGE_BYTES
from mpiuq.calibration.errors import CampaignError

#: Keys of ``[simulator]`` with an external simulator.
EXTERNAL_KEYS: tuple[str, ...] = (
    "callable",
    "command",
    "output_sizes",
    "regime_max_bytes",
    "regime_names",
    "max_simulator_runs",
    "batch_size",
    "timeout_s",
)
#: Most outputs per data table and most regimes.
MAX_OUTPUT_SIZES = 10_000
MAX_REGIMES = 64
#: Longest wall-clock limit of one call, seconds (a week).
MAX_TIMEOUT_S = 7 * 24 * 3600.0
#: Largest run budget.
MAX_SIMULATOR_RUNS = 10**8


@dataclass(frozen=True, slots=True)
class ExternalSpec:
    """A user's simulator: what to call, its outputs, its regimes and its run budget.

    Attributes
    ----------
    callable
        ``"module:function"`` or ``"file.py:function"``, or None for a command.
    command
        The command template (arguments, no shell), or None for a callable.
    output_sizes
        ``(label, sizes)`` per data table, in output order; one entry with label ``""``
        when ``output_sizes`` is a plain list.
    regime_max_bytes
        Largest size of every regime but the last, ascending (empty: one regime).
    regime_names
        One name per regime.
    max_simulator_runs
        Parameter sets the campaign may run in all (None: no limit; runs are counted).
    batch_size
        Parameter sets per call and per executor task.
    timeout_s
        Wall-clock limit of one command call, seconds.
    base_dir
        The campaign file's folder: where the module is looked up first and where the
        command runs.
    """

    callable: str | None
    command: tuple[str, ...] | None
    output_sizes: tuple[tuple[str, tuple[int, ...]], ...]
    regime_max_bytes: tuple[int, ...] = ()
    regime_names: tuple[str, ...] = ("all",)
    max_simulator_runs: int | None = None
    batch_size: int = 1
    timeout_s: float = 3600.0
    base_dir: Path = Path(".")

    @property
    def kind(self) -> str:
        """``"callable"`` or ``"command"``."""
        return "callable" if self.callable is not None else "command"

    @property
    def target(self) -> str:
        """The callable spec or the command line, for messages and summaries."""
        if self.callable is not None:
            return self.callable
        return shlex.join(self.command or ())

    def output_names(self) -> tuple[str, ...]:
        """Header of a command's outputs CSV: ``"<size>"`` for a plain ``output_sizes``
        list, ``"<label>:<size>"`` for a table of them.

        Examples
        --------
        >>> ExternalSpec("m:f", None, (("", (1, 64)),)).output_names()
        ('1', '64')
        >>> ExternalSpec("m:f", None, (("pp", (1,)), ("send", (1,)))).output_names()
        ('pp:1', 'send:1')
        """
        return tuple(
            f"{label}:{s}" if label else str(s) for label, sizes in self.output_sizes for s in sizes
        )

    def sizes_of(self, label: str, index: int) -> tuple[int, ...]:
        """The output sizes of data table ``index`` (labelled ``label``)."""
        if len(self.output_sizes) == 1 and not self.output_sizes[0][0]:
            return self.output_sizes[0][1]
        return dict(self.output_sizes)[label]

    def regime_of(self, size_bytes: int) -> str:
        """Name of the regime of a message size.

        Examples
        --------
        >>> ExternalSpec("m:f", None, (("", (1,)),), (150,), ("small", "large")).regime_of(151)
        'large'
        """
        k = sum(1 for t in self.regime_max_bytes if size_bytes > t)
        return self.regime_names[k]


def parse_external(t: Mapping[str, Any], base_dir: Path) -> ExternalSpec:
    """Validate the ``[simulator]`` table of an external simulator.

    Raises
    ------
    CampaignError
        Naming the key (``simulator.<key>``), the value and what is allowed.
    """
    p = "simulator."
    for key in t:
        if key not in EXTERNAL_KEYS:
            extra = (
                " (benchmark, window, fixed and regimes describe mpiuq's own simulator)"
                if key in ("benchmark", "window", "fixed", "regimes")
                else ""
            )
            raise CampaignError(
                f"{p}{key}",
                t[key],
                f"one of the keys {list(EXTERNAL_KEYS)} with an external simulator{extra}",
            )
    if ("callable" in t) == ("command" in t):
        raise CampaignError(
            f"{p}callable", t.get("callable", "(missing)"), "exactly one of callable or command"
        )
    fn: str | None = None
    command: tuple[str, ...] | None = None
    if "callable" in t:
        fn = t["callable"]
        target, sep, attr = fn.rpartition(":") if isinstance(fn, str) else ("", "", "")
        if not sep or not target.strip() or not attr.strip() or not attr.isidentifier():
            raise CampaignError(
                f"{p}callable", fn, "'module:function' or 'file.py:function' (a string)"
            )
    else:
        command = _command(t["command"])
    sizes = _output_sizes(t.get("output_sizes"))
    max_bytes = _regime_max_bytes(t.get("regime_max_bytes", []))
    names = _regime_names(t.get("regime_names"), len(max_bytes) + 1)
    runs = t.get("max_simulator_runs")
    if runs is not None and (
        isinstance(runs, bool) or not isinstance(runs, int) or not 1 <= runs <= MAX_SIMULATOR_RUNS
    ):
        raise CampaignError(
            f"{p}max_simulator_runs", runs, f"an integer from 1 to {MAX_SIMULATOR_RUNS}"
        )
    batch = t.get("batch_size", 1)
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= 100_000:
        raise CampaignError(f"{p}batch_size", batch, "an integer from 1 to 100000")
    timeout = t.get("timeout_s", 3600.0)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(float(timeout))
        or not 0 < float(timeout) <= MAX_TIMEOUT_S
    ):
        raise CampaignError(f"{p}timeout_s", timeout, f"seconds in (0, {MAX_TIMEOUT_S:g}]")
    if "timeout_s" in t and command is None:
        raise CampaignError(
            f"{p}timeout_s", timeout, "no value with a callable (only a command can be stopped)"
        )
    return ExternalSpec(
        fn, command, sizes, max_bytes, names, runs, batch, float(timeout), base_dir.resolve()
    )


def _command(raw: object) -> tuple[str, ...]:
    key = "simulator.command"
    if isinstance(raw, str):
        try:
            argv = tuple(shlex.split(raw))
        except ValueError as exc:
            raise CampaignError(
                key, raw, f"a command line that splits into words ({exc})"
            ) from None
    elif isinstance(raw, list) and all(isinstance(a, str) for a in raw):
        argv = tuple(raw)
    else:
        raise CampaignError(key, raw, "a command line string or a list of strings")
    if not argv or not all(argv):
        raise CampaignError(key, raw, "a non-empty command with no empty arguments")
    if not any("{output}" in a for a in argv):
        raise CampaignError(
            key, raw, "a command with an {output} argument (and usually {input}): see the docs"
        )
    return argv


def _size_list(raw: object, key: str) -> tuple[int, ...]:
    if (
        not isinstance(raw, list)
        or not raw
        or len(raw) > MAX_OUTPUT_SIZES
        or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 < s <= MAX_MESSAGE_BYTES
            for s in raw
        )
    ):
        raise CampaignError(
            key,
            raw,
            f"a non-empty list of at most {MAX_OUTPUT_SIZES} message sizes in bytes "
            f"(integers from 1 to {MAX_MESSAGE_BYTES})",
        )
    if len(set(raw)) != len(raw):
        raise CampaignError(key, raw, "distinct sizes")
    return tuple(raw)


def _output_sizes(raw: object) -> tuple[tuple[str, tuple[int, ...]], ...]:
    key = "simulator.output_sizes"
    if raw is None:
        raise CampaignError(
            key,
            "(missing)",
            "the message size of every output of the simulator, in order (a list; or a table "
            "of lists, one per data table label)",
        )
    if isinstance(raw, dict):
        if not raw:
            raise CampaignError(key, raw, "one list of sizes per data table label")
        return tuple((str(k), _size_list(v, f"{key}.{k}")) for k, v in raw.items())
    return (("", _size_list(raw, key)),)


def _regime_max_bytes(raw: object) -> tuple[int, ...]:
    key = "simulator.regime_max_bytes"
    if not isinstance(raw, list) or len(raw) >= MAX_REGIMES:
        raise CampaignError(key, raw, f"a list of fewer than {MAX_REGIMES} sizes in bytes")
    if not raw:
        return ()
    sizes = _size_list(raw, key)
    if list(sizes) != sorted(sizes):
        raise CampaignError(key, raw, "ascending sizes (the largest size of each regime)")
    return sizes


def _regime_names(raw: object, n: int) -> tuple[str, ...]:
    key = "simulator.regime_names"
    if raw is None:
        return ("all",) if n == 1 else tuple(f"r{k}" for k in range(n))
    if (
        not isinstance(raw, list)
        or len(raw) != n
        or not all(isinstance(x, str) and x.isidentifier() for x in raw)
        or len(set(raw)) != n
    ):
        raise CampaignError(
            key,
            raw,
            f"{n} distinct names (letters, digits, '_'), one per regime of regime_max_bytes",
        )
    return tuple(raw)


def external_tables(
    tables: list[tuple[str, Mapping[str, Any]]], spec: ExternalSpec
) -> list[tuple[str, Mapping[str, Any]]]:
    """The data tables of an external simulator's campaign, with explicit ``sizes``.

    Every table's label must match ``output_sizes`` (a plain list: one table); a table
    without ``sizes`` uses all its output sizes, ``sizes_per_protocol`` picks log-spaced
    output sizes in every regime of ``regime_max_bytes``, and explicit ``sizes`` must be
    output sizes.

    Raises
    ------
    CampaignError
        Naming the data table key (``data[k].label``, ``data.sizes``) and what is allowed.
    """
    from mpiuq.calibration.data.size_selection import select_sizes_per_regime

    plain = len(spec.output_sizes) == 1 and not spec.output_sizes[0][0]
    keys = [label for label, _ in spec.output_sizes]
    if plain and len(tables) != 1:
        raise CampaignError(
            "simulator.output_sizes",
            list(spec.output_sizes[0][1]),
            f"a table of sizes per data table label with {len(tables)} data tables",
        )
    out: list[tuple[str, Mapping[str, Any]]] = []
    for k, (prefix, table) in enumerate(tables):
        label = table.get("label", table.get("benchmark"))
        if not plain and (k >= len(keys) or label != keys[k]):
            raise CampaignError(
                f"{prefix}label",
                label,
                f"the label {keys[k] if k < len(keys) else '(none)'!r}: the data tables' "
                f"labels in order must be the keys of [simulator.output_sizes] {keys}",
            )
        sizes = spec.output_sizes[0][1] if plain else spec.output_sizes[k][1]
        t = dict(table)
        if "sizes" in t:
            given = t["sizes"]
            missing = [s for s in given if s not in sizes] if isinstance(given, list) else []
            if missing:
                raise CampaignError(
                    f"{prefix}sizes",
                    given,
                    f"sizes the simulator outputs (simulator.output_sizes); {missing[:10]} are not",
                )
        elif "sizes_per_protocol" in t:
            n = t["sizes_per_protocol"]
            if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_OUTPUT_SIZES:
                raise CampaignError(
                    f"{prefix}sizes_per_protocol", n, f"an integer from 1 to {MAX_OUTPUT_SIZES}"
                )
            lo = t.get("min_size_bytes", 1)
            hi = t.get("max_size_bytes", 2**62)
            lo = lo if isinstance(lo, int) and not isinstance(lo, bool) else 1
            hi = hi if isinstance(hi, int) and not isinstance(hi, bool) else 2**62
            t["sizes"] = list(select_sizes_per_regime(sizes, n, spec.regime_max_bytes, lo, hi))
            del t["sizes_per_protocol"]
            if not t["sizes"]:
                raise CampaignError(
                    f"{prefix}sizes_per_protocol",
                    n,
                    f"a choice that leaves sizes: no output size lies in [{lo}, {hi}]",
                )
        else:
            t["sizes"] = list(sizes)
        out.append((prefix, t))
    return out
