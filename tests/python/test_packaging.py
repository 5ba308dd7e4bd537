"""The wheel builder (packaging/reservoir_build): the PEP 517 hooks' promises, the readelf checks
and the manylinux tag they measure, the wheel's contents and RECORD, and the one-line messages
for a machine that cannot build. Runs on the build's modules (RESERVOIR_WHEEL_DIR: the build's
wheel/ folder, set by CTest) where they exist."""

import base64
import csv
import hashlib
import io
import os
import stat
import sys
import zipfile
from pathlib import Path

import pytest

from api_support import SOURCE

sys.path.insert(0, str(SOURCE / "packaging"))
import reservoir_build  # noqa: E402
from reservoir_build import cmake, elf, metadata, wheel  # noqa: E402

WHEEL_DIR = Path(os.environ.get("RESERVOIR_WHEEL_DIR", SOURCE / "build" / "wheel"))
DEV_MODULE_DIR = Path(os.environ.get("RESERVOIR_PYTHON_DIR", SOURCE / "build" / "python")) / "reservoir"


def _one(folder, pattern):
    found = sorted(Path(folder).glob(pattern))
    if not found:
        pytest.skip(f"no {pattern} in {folder} (configure the build with RESERVOIR_WHEEL_PYTHONS)")
    return found[0]


def test_the_backend_needs_nothing_to_build_with():
    assert reservoir_build.get_requires_for_build_wheel() == []
    text = (SOURCE / "pyproject.toml").read_text()
    assert "requires = []" in text and 'build-backend = "reservoir_build"' in text and 'backend-path = ["packaging"]' in text


def test_the_version_is_cmakes_project_version():
    assert metadata.version(SOURCE) == metadata.version(SOURCE).strip()
    assert f"VERSION {metadata.version(SOURCE)}" in (SOURCE / "CMakeLists.txt").read_text()


def test_prepared_metadata_names_the_console_script(tmp_path):
    name = reservoir_build.prepare_metadata_for_build_wheel(str(tmp_path))
    assert name == f"reservoir-{metadata.version(SOURCE)}.dist-info"
    meta = (tmp_path / name / "METADATA").read_text()
    assert "Name: reservoir" in meta and "Requires-Python: >=3.9" in meta
    assert "reservoir = reservoir.__main__:main" in (tmp_path / name / "entry_points.txt").read_text()


def test_the_self_contained_module_needs_only_what_manylinux_allows():
    module = _one(WHEEL_DIR, "cp*/reservoir/_core*.so")
    facts = elf.check(module)
    assert set(facts["needed"]) <= elf.ALLOWED_NEEDED, facts["needed"]
    assert (2, 17) <= facts["glibc"] <= elf.MAX_GLIBC, facts["glibc"]
    assert not any(v.startswith(("GLIBCXX_", "CXXABI_")) for names in facts["versions"].values() for v in names)
    assert "GLIBC_2.36" not in str(facts["versions"]), "arc4random must not reach libc (packaging/glibc_floor.cpp)"


def test_the_build_trees_module_is_not_self_contained_and_the_check_says_why():
    module = _one(DEV_MODULE_DIR, "_core*.so")
    with pytest.raises(elf.ElfProblem, match=r"needs .*libstdc\+\+\.so\.6.*which a self-contained wheel may not take"):
        elf.check(module)


def test_a_floor_past_the_limit_is_refused():
    module = _one(WHEEL_DIR, "cp*/reservoir/_core*.so")
    with pytest.raises(elf.ElfProblem, match=r"needs glibc 2\.\d+ .*newer than the 2\.17 a wheel may need"):
        elf.check(module, max_glibc=(2, 17))


def test_the_wheel_is_named_tagged_and_recorded_as_the_spec_says(tmp_path):
    module = _one(WHEEL_DIR, "cp*/reservoir/_core*.so")
    tag = module.parent.parent.name
    path, facts = wheel.build(SOURCE, module, tag, tmp_path)
    floor = "%d_%d" % facts["glibc"]
    assert path.name == f"reservoir-{metadata.version(SOURCE)}-{tag}-{tag}-manylinux_{floor}_x86_64.whl"
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        info = f"reservoir-{metadata.version(SOURCE)}.dist-info"
        assert {f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD", f"{info}/entry_points.txt"} <= set(names)
        assert "reservoir/__init__.py" in names and "reservoir/capture/__main__.py" in names
        assert f"reservoir/{module.name}" in names and not any("__pycache__" in n for n in names)
        assert f"Tag: {tag}-{tag}-manylinux_{floor}_x86_64" in z.read(f"{info}/WHEEL").decode()
        assert "Root-Is-Purelib: false" in z.read(f"{info}/WHEEL").decode()
        rows = list(csv.reader(io.StringIO(z.read(f"{info}/RECORD").decode())))
        assert {r[0] for r in rows} == set(names)
        for name, digest, size in rows:
            if name.endswith("RECORD"):
                assert digest == "" and size == ""
                continue
            data = z.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert digest == f"sha256={expected}" and int(size) == len(data), name
        assert stat.S_IMODE(z.getinfo(f"reservoir/{module.name}").external_attr >> 16) == 0o755
    again, _ = wheel.build(SOURCE, module, tag, tmp_path / "again")
    assert again.read_bytes() == path.read_bytes(), "the same inputs give the same wheel"


def test_an_interpreter_without_headers_gets_one_line_that_says_what_to_do(tmp_path):
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nprintf '3.12.1\\ncp312\\n0\\n/nowhere/include/python3.12\\n'\n")
    fake.chmod(0o755)
    with pytest.raises(cmake.BuildProblem) as e:
        cmake.interpreter(fake)
    message = str(e.value)
    assert "\n" not in message
    assert "has no Python.h in /nowhere/include/python3.12" in message and "scripts/build-wheels.sh" in message


def test_an_old_interpreter_is_named(tmp_path):
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nprintf '3.8.18\\ncp38\\n1\\n/x\\n'\n")
    fake.chmod(0o755)
    with pytest.raises(cmake.BuildProblem, match=r"is Python 3\.8\.18; reservoir needs 3\.9 or newer"):
        cmake.interpreter(fake)


def test_a_machine_without_cmake_gets_one_line(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(cmake.BuildProblem) as e:
        cmake.build_modules(SOURCE, SOURCE / "build-never", [{"python": sys.executable, "version": "3", "tag": "cp3"}])
    assert "\n" not in str(e.value) and "needs cmake" in str(e.value) and "scripts/build-wheels.sh" in str(e.value)
    assert not (SOURCE / "build-never").exists()


def test_build_wheels_sh_names_what_it_skipped_and_fails(tmp_path):
    import subprocess

    fake = tmp_path / "python3.8"
    fake.write_text("#!/bin/sh\nprintf '3.8.18\\ncp38\\n1\\n/x\\n'\n")
    fake.chmod(0o755)
    p = subprocess.run([str(SOURCE / "scripts" / "build-wheels.sh"), str(tmp_path / "out"), str(fake)],
                       capture_output=True, text=True, timeout=120, env=dict(os.environ, PATH=f"{tmp_path}:/usr/bin:/bin"))
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert "skipped" in p.stderr and "3.8.18" in p.stderr and "1 of 1 wheel(s) failed" in p.stderr
