"""Atomic file writes: a reader, or whatever runs after a crash, finds the old file or the whole
new one, never a part. Home files, trajectories, datasets, manifests and cards are written so."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def replacing(target: Path) -> Iterator[Path]:
    """A fresh path beside `target` for the block to write; once the block ends, the file there is
    flushed to disk and put in `target`'s place, or removed if the block failed."""
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        yield temporary
        with temporary.open("rb") as written:
            os.fsync(written.fileno())
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def write_text(target: Path, text: str) -> None:
    """Write `text` (UTF-8) to `target` atomically."""
    with replacing(target) as temporary:
        temporary.write_text(text, encoding="utf-8")
