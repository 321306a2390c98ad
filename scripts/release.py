#!/usr/bin/env python3
"""The release's files: the package's sdist and wheel, checked, and the integration's archive.

    scripts/release.py dist DIR       build the sdist and wheel into DIR offline (the build
                                      backend from this Python: --no-isolation), `twine check
                                      --strict` them, and check that the wheel carries twin/ and
                                      agent/ whole (their modules, YAML data and py.typed)
    scripts/release.py archive ZIP    the integration's archive for HACS (hacs.json `zip_release`)
                                      and for a manual install: the integration folder with the
                                      twin/ and agent/ packages it imports under lib/, so that it
                                      runs in a Home Assistant whose Python lacks homeflow (HA OS
                                      and Container, or any install offline)

`make test` runs `dist` into a temporary folder; the release workflow runs both.
Standard library only, beside `build` and `twine` for `dist`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("twin", "agent")
INTEGRATION = REPO / "custom_components" / "homeflow"
CARRIED = "lib"  # the folder of the archive that holds PACKAGES (custom_components/homeflow/lib)
SHIPPED = ("*.py", "*.yaml", "*.md", "py.typed")  # pyproject.toml's package data, and modules


class ReleaseError(RuntimeError):
    """A distribution or the archive is not what a release needs; the message says what."""


def package_files() -> list[str]:
    """The files of PACKAGES that a release carries, relative to the repository."""
    files = {
        path
        for package in PACKAGES
        for pattern in SHIPPED
        for path in (REPO / package).rglob(pattern)
        if "__pycache__" not in path.parts
    }
    return sorted(path.relative_to(REPO).as_posix() for path in files)


def build_dist(outdir: Path) -> list[Path]:
    """The sdist, then the wheel built from it (so the sdist is known to build), offline."""
    command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(outdir), str(REPO)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    sdists, wheels = sorted(outdir.glob("homeflow-*.tar.gz")), sorted(outdir.glob("homeflow-*.whl"))
    if len(sdists) != 1 or len(wheels) != 1:
        raise ReleaseError(f"expected one sdist and one wheel in {outdir}: {sdists + wheels}")
    built = [*sdists, *wheels]
    twine = [sys.executable, "-m", "twine", "check", "--strict", *map(str, built)]
    subprocess.run(twine, check=True)
    return built


def check_dist(sdist: Path, wheel: Path) -> None:
    """Both distributions carry every file of PACKAGES."""
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = set(archive.namelist())
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for name, carried in (("wheel", in_wheel), ("sdist", in_sdist)):
        if missing := [path for path in package_files() if path not in carried]:
            raise ReleaseError(f"the {name} lacks {len(missing)} files, e.g. {missing[:5]}")


def build_archive(target: Path) -> int:
    """Write the integration's archive; the number of files in it."""
    members = [
        (path, path.relative_to(INTEGRATION).as_posix())
        for path in sorted(INTEGRATION.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    ]
    members += [(REPO / path, f"{CARRIED}/{path}") for path in package_files()]
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, name in members:
            archive.write(path, name)
    return len(members)


def main(argv: list[str] | None = None) -> int:
    """Run one command; exit 1 with the reason when a release file is not right."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("dist", help="build and check the sdist and wheel").add_argument(
        "outdir", type=Path
    )
    commands.add_parser("archive", help="the integration's archive").add_argument(
        "target", type=Path
    )
    args = parser.parse_args(argv)
    try:
        if args.command == "dist":
            sdist, wheel = build_dist(args.outdir)
            check_dist(sdist, wheel)
            print(f"{sdist.name}, {wheel.name}: checked, {len(package_files())} package files")
        else:
            print(f"{args.target}: {build_archive(args.target)} files")
    except (ReleaseError, subprocess.CalledProcessError) as err:
        print(f"release: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
