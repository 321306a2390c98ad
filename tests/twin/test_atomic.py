"""Atomic writes: the old file or the whole new one, and nothing left beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from twin.atomic import replacing, write_text


def test_a_write_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "card.md"
    target.write_text("old")
    write_text(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert [p.name for p in tmp_path.iterdir()] == ["card.md"]


def test_an_interrupted_write_keeps_the_old_file_and_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "data.jsonl"
    target.write_text("old")

    def interrupted() -> None:
        with replacing(target) as temporary:
            temporary.write_text("half")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted()
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["data.jsonl"]
