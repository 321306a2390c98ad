"""`homeflow home`: generate, show, plot, simulate, summary."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from agent.cli import main
from twin.homefile import load_home

PNG = b"\x89PNG\r\n\x1a\n"


def invoke(*args: str) -> str:
    result = CliRunner().invoke(main, ["home", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_generate_show_plot_simulate(tmp_path: Path) -> None:
    path = tmp_path / "home.yaml"
    output = invoke(
        "generate", "--seed", "7", "--type", "apartment", "--city", "Oslo", "-o", str(path)
    )
    home = load_home(path)
    assert f"{len(home.devices)} devices" in output
    assert home.weather.city == "Oslo"  # type: ignore[attr-defined]

    shown = invoke("show", str(path))
    assert home.name in shown
    assert all(area.name in shown for area in home.areas.values())
    assert next(iter(home.entities)) in shown

    invoke("plot", str(path), "-o", str(tmp_path / "home.png"))
    assert (tmp_path / "home.png").read_bytes().startswith(PNG)
    invoke("simulate", str(path), "--hours", "2", "-o", str(tmp_path / "temps.png"))
    assert (tmp_path / "temps.png").read_bytes().startswith(PNG)


def test_the_same_seed_gives_the_same_file(tmp_path: Path) -> None:
    invoke("generate", "--seed", "3", "-o", str(tmp_path / "a.yaml"))
    invoke("generate", "--seed", "3", "-o", str(tmp_path / "b.yaml"))
    assert (tmp_path / "a.yaml").read_text() == (tmp_path / "b.yaml").read_text()


def test_bad_input_says_what_to_do(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["home", "generate", "--city", "Atlantis", "-o", str(tmp_path / "x.yaml")]
    )
    assert result.exit_code == 1
    assert "Atlantis" in result.output
    assert not (tmp_path / "x.yaml").exists()
    result = CliRunner().invoke(main, ["home", "show", str(tmp_path / "missing.yaml")])
    assert result.exit_code == 2
    assert "does not exist" in result.output


def test_summary_tabulates_a_population() -> None:
    output = invoke("summary", "--homes", "20")
    assert "villa" in output or "house" in output
    assert "light" in output


def test_cities_lists_the_weather_data() -> None:
    assert "Oslo (Norway)" in invoke("cities")
