"""What the wheel says about itself: name, version, summary, entry points (the wheel format's
METADATA, WHEEL and entry_points.txt). The version is CMakeLists.txt's project() version, the
one the compiled part reports, so the two cannot disagree."""

import re
from pathlib import Path

NAME = "reservoir"
SUMMARY = "Predict what PyTorch's CUDA caching allocator reserves, and where cleanup belongs"
REQUIRES_PYTHON = ">=3.9"
CLASSIFIERS = [
    "Programming Language :: C++",
    "Programming Language :: Python :: 3",
    "Operating System :: POSIX :: Linux",
    "Topic :: Software Development :: Debuggers",
]
CONSOLE_SCRIPTS = {"reservoir": "reservoir.__main__:main"}
# pytest finds the plugin through this entry point once the wheel is installed.
PYTEST_PLUGIN = ("reservoir", "reservoir.pytest_plugin")


def version(source):
    text = (Path(source) / "CMakeLists.txt").read_text(encoding="utf-8")
    m = re.search(r"project\(\s*Reservoir\s+VERSION\s+([0-9][0-9.]*)", text)
    if not m:
        raise SystemExit("reservoir_build: CMakeLists.txt has no project(Reservoir VERSION x.y.z)")
    return m.group(1)


def dist_info_name(source):
    return f"{NAME}-{version(source)}.dist-info"


def metadata_text(source):
    readme = (Path(source) / "README.md").read_text(encoding="utf-8")
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {version(source)}",
        f"Summary: {SUMMARY}",
        f"Requires-Python: {REQUIRES_PYTHON}",
        "Description-Content-Type: text/markdown",
    ]
    lines += [f"Classifier: {c}" for c in CLASSIFIERS]
    return "\n".join(lines) + "\n\n" + readme


def entry_points_text(package_dir):
    parts = ["[console_scripts]"]
    parts += [f"{name} = {target}" for name, target in CONSOLE_SCRIPTS.items()]
    if (Path(package_dir) / (PYTEST_PLUGIN[1].split(".")[-1] + ".py")).is_file():
        parts += ["", "[pytest11]", f"{PYTEST_PLUGIN[0]} = {PYTEST_PLUGIN[1]}"]
    return "\n".join(parts) + "\n"


def wheel_text(tag):
    return "\n".join(["Wheel-Version: 1.0", "Generator: reservoir_build", "Root-Is-Purelib: false",
                      f"Tag: {tag}"]) + "\n"
