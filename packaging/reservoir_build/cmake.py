"""Builds the wheels' compiled modules with the project's CMake: the libraries once, then one
self-contained reservoir._core per interpreter (cmake/Python.cmake, RESERVOIR_WHEEL_PYTHONS)."""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

MIN_PYTHON = (3, 9)
_DEBIAN_PACKAGES = ("cmake ninja-build g++ pybind11-dev libzstd-dev zlib1g-dev libfmt-dev nlohmann-json3-dev "
                    "libcli11-dev libboost-graph-dev")


class BuildProblem(Exception):
    """The build cannot be made here; str() is one line that says what to do."""


_FACTS = r"""
import sys, sysconfig, os
inc = sysconfig.get_paths()["include"]
print("%d.%d.%d" % sys.version_info[:3])
print("cp%d%d" % sys.version_info[:2])
print(int(os.path.exists(os.path.join(inc, "Python.h"))))
print(inc)
"""


def interpreter(python):
    """{"python", "version", "tag"} of an interpreter that can build the module; BuildProblem otherwise."""
    try:
        p = subprocess.run([str(python), "-c", _FACTS], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BuildProblem(f"{python} does not run: {e}") from None
    if p.returncode != 0:
        raise BuildProblem(f"{python} does not run: {p.stderr.strip().splitlines()[-1:] or p.returncode}")
    version, tag, has_header, include = p.stdout.split("\n")[:4]
    if tuple(int(x) for x in version.split(".")[:2]) < MIN_PYTHON:
        raise BuildProblem(f"{python} is Python {version}; reservoir needs {MIN_PYTHON[0]}.{MIN_PYTHON[1]} or newer")
    if has_header != "1":
        raise BuildProblem(f"{python} (Python {version}) has no Python.h in {include}: install its development "
                           f"headers (Debian: python3-dev), or install a wheel built by scripts/build-wheels.sh")
    return {"python": str(python), "version": version, "tag": tag}


def _tools():
    cmake = shutil.which("cmake")
    if not cmake:
        raise BuildProblem("building reservoir from source needs cmake and a C++20 compiler (Debian: apt install "
                           f"{_DEBIAN_PACKAGES}); or install a prebuilt wheel made by scripts/build-wheels.sh")
    return cmake, shutil.which("ninja")


def _first_error(log):
    text = Path(log).read_text(encoding="utf-8", errors="replace") if Path(log).exists() else ""
    for pattern in (r"CMake Error[^\n]*\n\s*([^\n]+)", r"error: ([^\n]+)", r"FAILED: ([^\n]+)"):
        m = re.search(pattern, text)
        if m:
            return m.group(1).strip()
    return "see the log"


def _run(cmd, log, what):
    with open(log, "a", encoding="utf-8") as out:
        out.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        out.flush()
        p = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise BuildProblem(f"{what} failed: {_first_error(log)} (the whole output: {log})")


def build_modules(source, build_dir, interpreters, build_type="Release", echo=None):
    """Configures build_dir for these interpreters and builds their modules; returns {tag: module path}."""
    cmake, ninja = _tools()
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    log = build_dir / "reservoir-build.log"
    log.write_text("", encoding="utf-8")
    configure = [cmake, "-S", str(source), "-B", str(build_dir), f"-DCMAKE_BUILD_TYPE={build_type}",
                 "-DRESERVOIR_BUILD_PYTHON=OFF", "-DRESERVOIR_WHEEL_PYTHONS=" + ";".join(i["python"] for i in interpreters),
                 "-DRESERVOIR_BUILD_TESTS=OFF", "-DRESERVOIR_BUILD_GUI=OFF", "-DRESERVOIR_BUILD_BENCHMARKS=OFF",
                 "-DRESERVOIR_BUILD_CUDA_REPLAY=OFF", "-DRESERVOIR_BUILD_TORCH_REPLAY=OFF", "-DRESERVOIR_BUILD_MPI=OFF"]
    if ninja and not (build_dir / "CMakeCache.txt").exists():
        configure += ["-G", "Ninja"]
    configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
    if echo:
        echo(f"configuring {build_dir} for " + ", ".join(i["version"] for i in interpreters))
    _run(configure, log, "configuring the build (cmake)")
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
    if echo:
        echo(f"building the libraries and {len(interpreters)} module(s) with {jobs} jobs (log: {log})")
    _run([cmake, "--build", str(build_dir), "--target", "reservoir_wheel_modules", "-j", jobs], log,
         "building the module")
    return {i["tag"]: module(build_dir, i["tag"]) for i in interpreters}


def module(build_dir, tag):
    """The self-contained module a build made for interpreter tag `tag`."""
    found = sorted((Path(build_dir) / "wheel" / tag / "reservoir").glob("_core*.so"))
    if not found:
        raise BuildProblem(f"{build_dir} has no module for {tag} (configure it with RESERVOIR_WHEEL_PYTHONS)")
    return found[0]


def this_interpreter():
    return interpreter(sys.executable)
