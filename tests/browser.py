"""Headless Chromium for the tests of the HTML reports (skipped where it is absent).

Debian's ``chromium`` package; a fresh profile per call, no network services. Pages are
rendered without JavaScript being needed: a screenshot (PNG) or the parsed DOM.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
)


def _chromium(page: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", *flags, page.resolve().as_uri()],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )


def screenshot(page: Path, png: Path, width: int, height: int) -> Path:
    """Render ``page`` in a ``width`` x ``height`` window into ``png``."""
    done = _chromium(page, f"--screenshot={png}", f"--window-size={width},{height}")
    assert png.is_file(), done.stderr[-2000:]
    return png


def dump_dom(page: Path) -> str:
    """The DOM of ``page`` after loading, serialised."""
    done = _chromium(page, "--dump-dom")
    assert done.returncode == 0 and "<html" in done.stdout, done.stderr[-2000:]
    return done.stdout
