"""Reservoir's build backend (PEP 517), in the source tree: `pip install .` builds the wheel with the
project's CMake and assembles it with the standard library (zipfile), so that it needs neither
setuptools nor wheel nor any download (docs/install.md). scripts/build-wheels.sh uses the same
code for several interpreters (python -m reservoir_build)."""

import sys
from pathlib import Path

from . import cmake, elf, metadata, wheel

SOURCE = Path(__file__).resolve().parents[2]

__all__ = ["get_requires_for_build_wheel", "prepare_metadata_for_build_wheel", "build_wheel"]


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    folder = Path(metadata_directory) / metadata.dist_info_name(SOURCE)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "METADATA").write_text(metadata.metadata_text(SOURCE), encoding="utf-8")
    (folder / "entry_points.txt").write_text(metadata.entry_points_text(SOURCE / "python" / "reservoir"),
                                            encoding="utf-8")
    return folder.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """The wheel for the interpreter running pip, tagged with the glibc its module needs here."""
    def echo(line):
        print(f"reservoir: {line}", file=sys.stderr, flush=True)

    try:
        target = cmake.this_interpreter()
        modules = cmake.build_modules(SOURCE, SOURCE / "build-pip", [target], echo=echo)
        path, facts = wheel.build(SOURCE, modules[target["tag"]], target["tag"], wheel_directory, max_glibc=(99, 0))
    except (cmake.BuildProblem, elf.ElfProblem) as e:
        raise SystemExit(f"reservoir: {e}") from None
    echo(f"built {path.name} (needs glibc {facts['glibc'][0]}.{facts['glibc'][1]})")
    return path.name
