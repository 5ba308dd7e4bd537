"""python -m reservoir_build --out DIR [--build-dir DIR | --from-build DIR] PYTHON...: one self-contained
wheel per interpreter (scripts/build-wheels.sh). --from-build assembles wheels from a build that
already made their modules (RESERVOIR_WHEEL_PYTHONS), as CI does. Exit 1 when any wheel fails."""

import argparse
import sys
from pathlib import Path

from . import SOURCE, cmake, elf, wheel


def _parse(argv):
    p = argparse.ArgumentParser(prog="python -m reservoir_build", description=__doc__.split("\n\n")[0])
    p.add_argument("pythons", nargs="+", metavar="PYTHON", help="an interpreter's path (e.g. ~/.pyenv/versions/3.12.1/bin/python3)")
    p.add_argument("--out", required=True, type=Path, help="where the wheels go (created if missing)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--build-dir", type=Path, default=SOURCE / "build-wheels", help="the CMake build to make (default: build-wheels)")
    where.add_argument("--from-build", type=Path, help="a build that has the modules already: only assemble")
    p.add_argument("--max-glibc", default="%d.%d" % elf.MAX_GLIBC, help="the newest glibc a wheel may need (default %(default)s)")
    return p.parse_args(argv)


def main(argv=None):
    a = _parse(argv)
    max_glibc = tuple(int(x) for x in a.max_glibc.split("."))
    failures, ready = [], []
    for python in a.pythons:
        try:
            ready.append(cmake.interpreter(python))
        except cmake.BuildProblem as e:
            failures.append(str(e))
            print(f"reservoir_build: skipped: {e}", file=sys.stderr)
    modules = {}
    if ready:
        try:
            if a.from_build:
                modules = {i["tag"]: cmake.module(a.from_build, i["tag"]) for i in ready}
            else:
                modules = cmake.build_modules(SOURCE, a.build_dir, ready,
                                              echo=lambda line: print(f"reservoir_build: {line}", file=sys.stderr, flush=True))
        except cmake.BuildProblem as e:
            failures.append(str(e))
            print(f"reservoir_build: {e}", file=sys.stderr)
    for i in ready:
        if i["tag"] not in modules:
            continue
        try:
            path, facts = wheel.build(SOURCE, modules[i["tag"]], i["tag"], a.out, max_glibc)
        except elf.ElfProblem as e:
            failures.append(str(e))
            print(f"reservoir_build: {i['python']}: {e}", file=sys.stderr)
            continue
        floor = "%d.%d" % facts["glibc"]
        print(f"{path}  (Python {i['version']}; needs glibc {floor}; NEEDED {', '.join(facts['needed'])})")
    if failures:
        print(f"reservoir_build: {len(failures)} of {len(a.pythons)} wheel(s) failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
