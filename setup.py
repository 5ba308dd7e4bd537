"""Builds reservoir._core with the project's CMake (pyproject.toml; docs/python.md).

Only what the module needs is configured: no tests, GUI, benchmarks or GPU backends. The module
is built for the interpreter running this script. CMAKE_ARGS adds CMake options (e.g.
-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); CMAKE_BUILD_PARALLEL_LEVEL sets the build's jobs.
"""

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name)).resolve()
        build = Path(self.build_temp).resolve() / "cmake"
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
            f"-DRESERVOIR_PYTHON={sys.executable}", "-DRESERVOIR_BUILD_PYTHON=ON", "-DRESERVOIR_BUILD_TESTS=OFF",
            "-DRESERVOIR_BUILD_GUI=OFF", "-DRESERVOIR_BUILD_BENCHMARKS=OFF", "-DRESERVOIR_BUILD_CUDA_REPLAY=OFF",
            "-DRESERVOIR_BUILD_TORCH_REPLAY=OFF"
        ]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build), "--target", "reservoir_python_core", "-j", jobs], check=True)
        built = sorted((build / "python" / "reservoir").glob("_core*.so"))
        if not built:
            sys.exit(f"the CMake build made no reservoir/_core module in {build}/python: is pybind11-dev installed?")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    packages=find_packages("python"),
    package_dir={"": "python"},
    ext_modules=[CMakeExtension("reservoir._core")],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip"}},
    zip_safe=False,
)
