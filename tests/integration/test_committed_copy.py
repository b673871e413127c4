"""Tests read the repository's committed results through a copy of what the last commit
holds (``committed_copy``, the ``committed_results`` fixture), so that no test depends on
the working tree's state of a committed results folder (a run may have written there)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from shared_data import COMMITTED_CAMPAIGNS, ROOT, committed_copy, committed_files


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, check=True, timeout=60
    ).stdout


def _in_git_checkout() -> bool:
    try:
        _git(ROOT, "rev-parse", "--verify", "HEAD")
    except (OSError, subprocess.SubprocessError):
        return False
    return True


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_the_copy_is_the_commit_whatever_the_working_tree_holds(tmp_path: Path) -> None:
    """A throwaway checkout whose committed folder is then changed, emptied of one file,
    given an untracked and a staged file: the copy is the commit, byte for byte."""
    repo = tmp_path / "repo"
    folder = repo / "results" / "camp"
    (folder / "sub").mkdir(parents=True)
    committed = {"summary.json": b'{"a": 1}\n', "sub/draws.nc": bytes(range(256)) * 4}
    for name, data in committed.items():
        (folder / name).write_bytes(data)
    _git(tmp_path, "init", "-q", str(repo))
    _git(repo, "add", "results")
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false"]
    _git(repo, *identity, "commit", "-q", "-m", "results")
    # what an interrupted run may leave behind
    (folder / "summary.json").write_bytes(b"{half a summ")
    (folder / "sub" / "draws.nc").unlink()
    (folder / "previous-run").mkdir()
    (folder / "previous-run" / "summary.json").write_bytes(b"{}")
    (folder / "staged.txt").write_bytes(b"staged, not committed")
    _git(repo, "add", "results/camp/staged.txt")

    copy = committed_copy("results/camp", tmp_path / "out", root=repo)
    assert copy == tmp_path / "out" / "results" / "camp"  # the relative layout is kept
    assert _files(copy) == committed
    assert committed_files("results/camp", root=repo) == [
        "results/camp/sub/draws.nc",
        "results/camp/summary.json",
    ]


def test_outside_a_git_checkout_the_working_tree_is_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # no repository above
    folder = tmp_path / "tree" / "results" / "camp"
    folder.mkdir(parents=True)
    (folder / "summary.json").write_bytes(b"{}")
    copy = committed_copy("results/camp", tmp_path / "out", root=tmp_path / "tree")
    assert _files(copy) == {"summary.json": b"{}"}
    assert committed_files("results/camp", root=tmp_path / "tree") == ["results/camp/summary.json"]


@pytest.mark.skipif(not _in_git_checkout(), reason="not a git checkout")
def test_the_committed_results_fixture_is_head_byte_for_byte(committed_results: Path) -> None:
    """Every file of HEAD's ``results/`` in the fixture's copy as ``git show HEAD:path``
    gives it, and nothing else; the campaigns the tests are parametrized by are there."""
    assert committed_results.name == "results"
    copy = _files(committed_results)
    names = committed_files("results")
    assert sorted(f"results/{name}" for name in copy) == names
    for name in names:
        assert copy[name.removeprefix("results/")] == _git(ROOT, "show", f"HEAD:{name}"), name
    assert COMMITTED_CAMPAIGNS and all(
        (committed_results / c / "summary.json").is_file() for c in COMMITTED_CAMPAIGNS
    )
