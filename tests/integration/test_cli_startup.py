"""Start-up of the ``mpiuq`` command: what a command line imports, ``--version``, ``--quiet``.

Checked by the modules a fresh interpreter holds after the call (never by timing):
``--help``, ``--version`` and a usage error must not load numba (the compiled loops),
SciPy or the simulator's engine, and ``mpiuq replay`` with a usage error must not load
numba either.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from shared_data import TRACES

from mpiuq import __version__
from mpiuq.main import COMMANDS, build_parser, main, named_command
from mpiuq.runtime.progress import Progress

#: Modules whose import costs a tenth of a second or more, none needed to parse arguments.
HEAVY = ("numba", "scipy", "h5py", "matplotlib", "chaospy", "dask", "mpiuq.simulator.engine")


def _loaded_after(code: str) -> set[str]:
    """Top-level names of HEAVY modules imported by ``code`` in a fresh interpreter."""
    probe = (
        "import sys, json\n"
        f"{code}\n"
        f"heavy = {HEAVY!r}\n"
        "print(json.dumps(sorted(h for h in heavy if h in sys.modules)))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return set(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_importing_the_entry_point_loads_nothing_heavy() -> None:
    assert _loaded_after("import mpiuq.main") == set()
    assert "numpy" not in _loaded_after("import mpiuq.main")


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["--version"],
        ["no-such-command"],
        ["replay"],  # missing TRACE: a usage error of the replay command
        ["replay", "--help"],
        ["trace", "info", "--bogus"],
        ["trace", "synth", "--help"],
        ["simulate", "--bogus"],
        ["whatif", "--bogus"],
        ["replay", "/no/such/trace"],  # a missing trace is refused before numba loads
        ["trace", "info", "/no/such/trace"],
        ["campaign", "run", "--help"],
        ["campaign", "run", "--wokers", "2", "c.toml"],  # an option typo
        ["report", "--help"],
        ["campaign", "report", "--help"],
        ["report", "/no/such/folder"],
    ],
)
def test_help_version_and_usage_errors_load_no_compiled_code(argv: list[str]) -> None:
    code = (
        "from mpiuq.main import main\n"
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    try:\n"
        f"        main({argv!r})\n"
        "    except SystemExit:\n"
        "        pass"
    )
    assert _loaded_after(code) == set()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"mpiuq {__version__}"


def test_only_the_named_command_is_registered_in_full() -> None:
    assert named_command(["--debug", "replay", "x.h5"]) == "replay"
    assert named_command(["--help"]) is None
    assert named_command(["bogus", "replay"]) is None
    parser = build_parser("")
    assert "usage" in parser.format_help() and all(n in parser.format_help() for n in COMMANDS)


def test_command_table_help_matches_each_module() -> None:
    """The one-line help of ``mpiuq --help`` (the table) is the module's own."""
    full = build_parser(None)
    sub = next(a for a in full._actions if a.dest == "command")
    helps = {a.dest: a.help for a in sub._choices_actions}  # type: ignore[attr-defined]
    assert helps == {name: text for name, (_module, text) in COMMANDS.items()}


@pytest.mark.parametrize(
    "argv",
    [
        ["--quiet", "trace", "info", "TRACE"],
        ["trace", "info", "TRACE", "--quiet"],
        ["trace", "info", "TRACE", "-q"],
        ["-q", "replay", "TRACE"],
        ["replay", "TRACE", "--quiet"],
        ["campaign", "run", "c.toml", "--quiet"],
        ["--quiet", "campaign", "run", "c.toml"],
    ],
)
def test_quiet_before_or_after_the_command(argv: list[str]) -> None:
    args = build_parser(named_command(argv)).parse_args(argv)
    assert args.quiet is True


def test_not_quiet_by_default() -> None:
    argv = ["replay", "TRACE"]
    assert build_parser("replay").parse_args(argv).quiet is False


def test_progress_lines_and_quiet() -> None:
    out = io.StringIO()
    progress = Progress(stream=out)
    with progress.stage("lowering") as done:
        done("12 operations")
    progress.compiling("kernel.run.run_batch", None)
    progress.compiling("kernel.run.run_batch", 12.3)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("lowering: 12 operations (")
    assert lines[1].startswith("compiling kernel.run.run_batch (not in numba's cache: ")
    assert lines[2] == "compiled kernel.run.run_batch in 12 s (cached: not compiled again)"
    silent = io.StringIO()
    quiet = Progress(quiet=True, stream=silent)
    with quiet.stage("x") as done:
        done("y")
    quiet.compiling("x", None)
    quiet.fraction("model")(0.5)
    assert silent.getvalue() == ""


def test_watched_run_is_bit_identical_and_reports_progress() -> None:
    """The engine's progress watcher (kernel in a worker thread) changes no result bit."""
    import numpy as np

    from mpiuq.simulator.engine import simulate
    from mpiuq.simulator.lowering.lower import lower_trace
    from mpiuq.simulator.motifs import MotifSpec, synthesize
    from mpiuq.simulator.networks import network_by_name

    program = lower_trace(synthesize(MotifSpec("halo3d", n_ranks=64, iterations=3))).program
    network = network_by_name("analytic")
    plain = simulate(program, network=network)
    seen: list[float] = []
    watched = simulate(program, network=network, on_progress=seen.append)
    assert seen and seen[-1] == 1.0 and all(0.0 <= f <= 1.0 for f in seen)
    assert watched.n_events == plain.n_events
    for name in ("end_s", "parts_s", "per_call_s", "matched_recv", "link_bytes"):
        np.testing.assert_array_equal(getattr(watched, name), getattr(plain, name), strict=True)


def test_replay_without_the_trace_matches_replay() -> None:
    """Replaying from the lowered program and the trace's origin (the CLI's path, which
    lets the trace go) gives the result of :func:`replay`, progress reports in order."""
    from mpiuq.simulator.motifs import MotifSpec, synthesize
    from mpiuq.simulator.parameters import SimParams
    from mpiuq.simulator.replay.run import (
        ReplayProgress,
        ReplaySetup,
        TraceOrigin,
        lower_for_replay,
        replay,
        replay_lowered,
    )

    trace = synthesize(MotifSpec("halo3d", n_ranks=27, iterations=2))
    params, setup = SimParams(), ReplaySetup(models=("analytic", "compute-only"))
    whole = replay(trace, params, setup).as_dict()
    stages: list[ReplayProgress] = []
    low, _ = lower_for_replay(trace, params, setup, stages.append)
    split = replay_lowered(TraceOrigin.of(trace), low, params, setup, on_progress=stages.append)
    got = split.as_dict()
    for d in (whole, got):
        d.pop("lowering_s")
        for m in d["models"].values():
            m.pop("wall_s")
    assert got == whole
    assert [(p.stage, p.done) for p in stages if p.done in (0.0, 1.0)] == [
        ("lowering", 0.0),
        ("lowering", 1.0),
        ("analytic", 0.0),
        ("analytic", 1.0),
        ("compute-only", 0.0),
        ("compute-only", 1.0),
    ]
    assert stages[3].events > 0 and stages[1].operations == low.program.n_ops


def test_a_second_replay_compiles_nothing(tmp_path: Path) -> None:
    """Every loop a replay runs is in numba's on-disk cache after the first run (which
    may compile): a second process loads them all."""
    trace = TRACES / "gen_ti_lulesh_8r"
    if not trace.is_dir():
        pytest.skip("shared traces not present")
    code = (
        "import json, contextlib, io\n"
        "from mpiuq.main import main\n"
        "from mpiuq.simulator.runtime.jit import on_compile\n"
        "compiled = []\n"
        "with contextlib.redirect_stdout(io.StringIO()), on_compile(\n"
        "    lambda loop, took: compiled.append(loop)\n"
        "):\n"
        f"    main(['replay', {str(trace)!r}, '--model', 'analytic', '--quiet'])\n"
        "print(json.dumps(compiled))\n"
    )
    env = {**os.environ, "MPIUQ_CACHE_DIR": str(tmp_path)}
    for _ in range(2):  # the second run finds every loop in numba's cache
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=900, env=env
        )
        assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []


def test_numba_is_imported_without_scipy_or_yaml_which_stay_importable(tmp_path: Path) -> None:
    code = (
        "import sys, json\n"
        "from mpiuq.simulator.runtime.numba_import import import_numba\n"
        "import_numba()\n"
        "seen = [m for m in ('numba', 'scipy', 'yaml') if m in sys.modules]\n"
        "import scipy, yaml\n"
        "print(json.dumps(seen))\n"
    )
    for config, expected in ((False, ["numba"]), (True, ["numba", "yaml"])):
        if config:  # numba's settings file: PyYAML is imported to read it
            (tmp_path / ".numba_config.yaml").write_text("DEBUG_CACHE: 0\n")
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout.strip().splitlines()[-1]) == expected


def test_each_compilation_is_announced_and_timed_and_only_a_compilation() -> None:
    import numba

    from mpiuq.simulator.runtime.jit import on_compile

    @numba.njit
    def add_one(x: int) -> int:
        return x + 1

    out = io.StringIO()
    progress = Progress(stream=out)
    with progress.watching_compilation():
        assert add_one(1) == 2  # compiled here (no cache)
        assert add_one(2) == 3  # already compiled
    lines = out.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("compiling test_cli_startup.") and "add_one" in lines[0]
    assert lines[1].startswith("compiled test_cli_startup.") and " s (cached" in lines[1]
    calls: list[str] = []
    with on_compile(lambda loop, took: calls.append(loop)):
        add_one(3)  # loaded, not compiled: no call
    assert calls == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_rewrites_one_line_per_stage() -> None:
    out = _Terminal()
    progress = Progress(stream=out)
    progress.begin("analytic")
    progress.fraction("analytic")(0.25)
    progress.line("analytic: 10 events in 0.10 s")
    text = out.getvalue()
    assert "\ranalytic ..." in text and "\ranalytic  25.0%" in text
    assert text.endswith("\nanalytic: 10 events in 0.10 s\n")  # the running line is ended first


@pytest.mark.parametrize("quiet", [False, True])
def test_replay_reports_each_stage_on_stderr_unless_quiet(
    tmp_path: object,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    quiet: bool,
) -> None:
    from pathlib import Path

    from mpiuq.simulator.motifs import MotifSpec, synthesize
    from mpiuq.simulator.trace import save_trace

    folder = Path(str(tmp_path))
    monkeypatch.setenv("MPIUQ_CACHE_DIR", str(folder / "cache"))
    trace_file = folder / "halo.h5"
    save_trace(synthesize(MotifSpec("halo3d", n_ranks=8, iterations=2)), trace_file)
    argv = ["replay", str(trace_file), "--model", "analytic,compute-only"]
    assert main([*argv, "--quiet"] if quiet else argv) == 0
    captured = capsys.readouterr()
    assert "analytic" in captured.out  # the table
    if quiet:
        assert captured.err == ""
    else:
        # a loop missing from numba's cache (an edited source) compiles and says so
        compiling = ("compiling ", "still compiling ", "compiled ")
        lines = [ln for ln in captured.err.splitlines() if not ln.startswith(compiling)]
        assert lines[0].startswith(f"reading {trace_file}: synthetic, 8 ranks, ")
        assert lines[1].startswith("lowering: ") and " operations (" in lines[1]
        # the models run at once in threads (one per usable core): a line each as it ends
        ends = sorted(lines[2:4])
        assert ends[0].startswith("analytic: ") and "M events/s)" in ends[0]
        assert ends[1].startswith("compute-only: ") and " events in " in ends[1]


def test_console_script_ends_a_replay_with_its_output_and_exit_code(tmp_path: Path) -> None:
    """``python -m mpiuq replay`` (the console script's :func:`run`) ends the process
    without the interpreter's clean-up after a replay: the table and a ``--out`` file are
    complete, the exit code is the command's (0, or 2 for a missing trace)."""
    from mpiuq.simulator.motifs import MotifSpec, synthesize
    from mpiuq.simulator.trace import save_trace

    trace_file = tmp_path / "halo.h5"
    save_trace(synthesize(MotifSpec("halo3d", n_ranks=8, iterations=2)), trace_file)
    env = dict(os.environ, MPIUQ_CACHE_DIR=str(tmp_path / "cache"))
    first, second = tmp_path / "1" / "out", tmp_path / "2" / "out"
    argv = ["replay", str(trace_file), "--model", "analytic", "--out", str(first)]
    done = subprocess.run(
        [sys.executable, "-m", "mpiuq", *argv],
        capture_output=True, text=True, timeout=300, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    in_process = io.StringIO()
    with pytest.MonkeyPatch.context() as m:
        m.setattr(sys, "stdout", in_process)
        m.setenv("MPIUQ_CACHE_DIR", str(tmp_path / "cache"))
        assert main([*argv[:-1], str(second), "--quiet"]) == 0
    # every line written before the exit (wall-clock figures aside)
    assert _without_numbers(done.stdout) == _without_numbers(in_process.getvalue())
    assert sorted(p.name for p in first.iterdir()) == sorted(p.name for p in second.iterdir())
    for p in first.iterdir():
        if p.suffix == ".json":
            json.loads(p.read_text())  # complete
            assert _without_numbers(p.read_text()) == _without_numbers(
                (second / p.name).read_text()
            )
    missing = subprocess.run(
        [sys.executable, "-m", "mpiuq", "replay", str(tmp_path / "none.h5")],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def _without_numbers(text: str) -> str:
    import re

    return re.sub(r"[0-9.]+", "N", text)
