"""The config is replaced whole or not at all: the old file stays, unchanged, until the new one,
written and checked beside it, takes its place in one rename."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gateway.config.rewrite import FileChanged, rewrite

ROOT = Path(__file__).parents[2]
OLD = "# mine\nmodel_list: []   # kept\n"
NEW = "# mine\nmodel_list: [a]   # kept\n"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    file = tmp_path / "bench.yaml"
    file.write_text(OLD)
    file.chmod(0o600)
    return file


def test_the_new_text_takes_the_old_files_place_with_its_mode(path):
    rewrite(path, OLD.encode(), NEW, lambda temp: None)
    assert path.read_text() == NEW
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["bench.yaml"]


def test_until_the_rename_the_old_file_is_whole_and_the_new_one_is_beside_it(path):
    seen = {}

    def check(temp: Path) -> None:
        seen["old"] = path.read_text()
        seen["temp"] = (temp.parent, temp.read_text(), temp.stat().st_mode & 0o777)

    rewrite(path, OLD.encode(), NEW, check)
    assert seen == {"old": OLD, "temp": (path.parent, NEW, 0o600)}


def test_a_refused_check_leaves_the_file_as_it_was_and_no_temporary_behind(path):
    def refuse(temp: Path) -> None:
        raise ValueError("no")

    with pytest.raises(ValueError):
        rewrite(path, OLD.encode(), NEW, refuse)
    assert path.read_bytes() == OLD.encode()
    assert [p.name for p in path.parent.iterdir()] == ["bench.yaml"]


def test_a_file_edited_meanwhile_is_not_overwritten(path):
    def someone_else(temp: Path) -> None:
        path.write_text("# theirs\n")

    with pytest.raises(FileChanged, match="changed while it was being edited"):
        rewrite(path, OLD.encode(), NEW, someone_else)
    assert path.read_text() == "# theirs\n"


def test_a_process_killed_mid_write_leaves_the_old_file_whole(path):
    """A real crash: the writing process is killed (SIGKILL) after the new text is on disk but
    before the rename. The file is the old one, byte for byte; only a stray temporary remains."""
    program = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from gateway.config.rewrite import rewrite
        rewrite(Path({str(path)!r}), {OLD.encode()!r}, {NEW * 1000!r},
                lambda temp: os.kill(os.getpid(), signal.SIGKILL))
        """
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=ROOT, timeout=60)
    assert done.returncode == -signal.SIGKILL
    assert path.read_bytes() == OLD.encode()
    strays = [p for p in path.parent.iterdir() if p != path]
    assert len(strays) == 1 and strays[0].name.startswith(".bench.yaml.")
    assert strays[0].read_text() == NEW * 1000  # it was whole on disk, and never took over
    os.unlink(strays[0])


@pytest.mark.skipif(os.getuid() != 0, reason="only root can give a file to someone else")
def test_a_file_rewritten_by_root_stays_its_owners(path):
    os.chown(path, 65534, 65534)
    rewrite(path, OLD.encode(), NEW, lambda temp: None)
    assert (path.stat().st_uid, path.stat().st_gid) == (65534, 65534)
