"""A failed HDF5 write (full disk, file size limit) is one line naming the file, exit 1.

h5py reports such a failure with HDF5's error stack as the message, or only prints it
while freeing an object (the write then looks successful); the real failure is made in a
child process with a file-size limit (``RLIMIT_FSIZE``: writes past it fail with EFBIG
like a full disk with ENOSPC), the full-disk text is replayed with a stand-in h5py.
"""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from mpiuq.runtime.exit_codes import EXIT_FAILED, describe, exit_code
from mpiuq.surrogate.chaos.pce import fit_pce
from mpiuq.surrogate.design.box import ParameterBox
from mpiuq.surrogate.store import hdf5_errors, storage
from mpiuq.surrogate.store.hdf5_errors import hdf5_reason, naming_hdf5_errors

#: What h5py raised on a full tmpfs (HDF5 1.14, h5py 3.16), line break included.
FULL_DISK_TEXT = (
    "Can't synchronously write data (file write failed: time = Fri Nov 27 06:03:23 2026\n"
    ", filename = '/tmp/full/x.h5.partial-42', file descriptor = 3, errno = 28, error "
    "message = 'No space left on device', buf = 0x7f5315401810, total write size = 736512, "
    "bytes this sub-write = 736512, offset = 65536)"
)


def _pce() -> Any:
    rng = np.random.default_rng(0)
    box = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (0.0, 1.0)})
    x = rng.random((40, 2))
    return fit_pce(x, x[:, 0] + x[:, 1] ** 2, box, order=2)


def test_a_full_disk_is_one_line_naming_the_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, FULL_DISK_TEXT)

    monkeypatch.setattr(storage.h5py, "File", full_disk)
    monkeypatch.setattr(hdf5_errors, "FAILED_WRITES", [])
    target = tmp_path / "surrogate.h5"
    with pytest.raises(OSError, match=r"No space left on device") as caught:
        storage.save_pce(_pce(), target)
    assert caught.value.filename == str(target) and caught.value.errno == errno.ENOSPC
    assert describe(caught.value) == f"{target}: No space left on device"
    assert exit_code(caught.value) == EXIT_FAILED
    assert list(tmp_path.iterdir()) == []  # nothing half-written left behind
    assert hdf5_errors.unsafe_to_finalize()


def test_a_failure_h5py_only_prints_is_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    """h5py's destructors report a failed flush through sys.unraisablehook and go on."""
    monkeypatch.setattr(hdf5_errors, "FAILED_WRITES", [])
    failure = RuntimeError(f"Can't decrement id ref count ({FULL_DISK_TEXT[32:]}")
    hooks = (sys.unraisablehook, sys.excepthook)
    info = SimpleNamespace(
        exc_type=RuntimeError,
        exc_value=failure,
        exc_traceback=None,
        err_msg=None,
        object="h5py._objects.ObjectID.__dealloc__",
    )
    with (
        pytest.raises(OSError, match="No space left on device") as caught,
        naming_hdf5_errors("out/x.h5"),
    ):
        sys.unraisablehook(info)  # what h5py's destructor does, then carries on
    assert caught.value.filename == "out/x.h5"
    assert (sys.unraisablehook, sys.excepthook) == hooks  # restored


def test_errors_python_raised_pass_unchanged(tmp_path: Path) -> None:
    error = PermissionError(errno.EACCES, "Permission denied", str(tmp_path / "x"))
    with pytest.raises(PermissionError) as caught, naming_hdf5_errors(tmp_path / "y.h5"):
        raise error
    assert caught.value is error
    with pytest.raises(ValueError, match="not HDF5"), naming_hdf5_errors(tmp_path / "y.h5"):
        raise ValueError("not HDF5")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (FULL_DISK_TEXT, "No space left on device"),
        (
            "Unable to create file (unable to lock file, errno = 11, ...)",
            "Resource temporarily unavailable",
        ),
        ("Unable to open object (object 'x' doesn't exist)", "Unable to open object"),
    ],
)
def test_hdf5_reason(text: str, reason: str) -> None:
    assert hdf5_reason(OSError(text)) == reason


DESIGN_WRITE = """
import sys
import numpy as np
from mpiuq.surrogate.design.box import ParameterBox
from mpiuq.surrogate.chaos.tables import write_design_csv, write_table_csv

rng = np.random.default_rng(0)
box = ParameterBox.from_bounds({"a": (0.0, 1.0), "b": (0.0, 1.0)})
x = box.lower + rng.random((3000, 2))
write_design_csv(sys.argv[1], box, x)
write_table_csv(sys.argv[2], ["y"], (x[:, 0] + x[:, 1] ** 2)[:, None])
"""

LIMITED_RUN = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))
from mpiuq.main import run
sys.argv = ["mpiuq", *sys.argv[1:]]
run()
"""


def test_a_real_failed_hdf5_write_from_the_console(tmp_path: Path) -> None:
    """A write HDF5 cannot finish (a surrogate of 3,000 training points past a 60 kB
    file-size limit): one line naming the file, exit 1, no crash, no file left."""
    design, outputs = tmp_path / "design.csv", tmp_path / "y.csv"
    subprocess.run(
        [sys.executable, "-c", DESIGN_WRITE, str(design), str(outputs)],
        check=True, timeout=120,
    )  # fmt: skip
    out = tmp_path / "fit"
    argv = ["surrogate", "fit", "--design", str(design), "--outputs", str(outputs)]
    argv += ["--order", "2", "--out", str(out), "--no-plot"]
    done = subprocess.run(
        [sys.executable, "-c", LIMITED_RUN, *argv],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == EXIT_FAILED, done.stderr
    assert done.stderr == f"mpiuq surrogate fit: error: {out / 'surrogate.h5'}: File too large\n"
    assert not (out / "surrogate.h5").exists()
    assert not list(out.glob("surrogate.h5.partial-*"))
