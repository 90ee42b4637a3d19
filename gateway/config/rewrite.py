"""A config file replaced whole or not at all.

Why: a gateway reloads its config from this file, and a person's only copy of their bench may
be it. A write cut short (a crash, a full disk, a kill) must never leave half a file. The new
text goes to a temporary file beside the old one (same folder, so same file system), is flushed
to disk, given the old file's mode (and owner, where it may), checked as the file it will be,
and only then renamed over the old one in one step (`os.replace`); the folder is flushed so the
rename itself lasts. Until that rename, the old file is there, whole and unchanged.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path


class FileChanged(Exception):
    """The file changed on disk between reading it and writing it: someone else edited it."""


def rewrite(path: Path, was: bytes, text: str, check: Callable[[Path], None]) -> None:
    """Put *text* in place of *path*, whose content was *was* when it was read. *check* is given
    the new file before it takes *path*'s place; whatever it raises leaves *path* untouched (as
    does any failure on the way), and no temporary file behind."""
    held = path.stat()
    handle, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    temp = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temp, stat.S_IMODE(held.st_mode))
        if (held.st_uid, held.st_gid) != (os.getuid(), os.getgid()):
            with contextlib.suppress(OSError):  # root editing someone's file: still theirs
                os.chown(temp, held.st_uid, held.st_gid)
        check(temp)
        if path.read_bytes() != was:
            raise FileChanged(f"{path} changed while it was being edited: run the command again")
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _flush_folder(path.parent)


def _flush_folder(folder: Path) -> None:
    """The rename itself on disk (where a folder can be opened to flush it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
