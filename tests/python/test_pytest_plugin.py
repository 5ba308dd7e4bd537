"""reservoir's pytest plugin (reservoir.pytest_plugin), through pytester: loaded with `-p` from the
build tree, its marker listed and accepted under --strict-markers, importable without torch.
Without CUDA a marked test is skipped, saying why. Where torch and CUDA are present (here the stub
torch of tests/python/stub_torch, whose _snapshot() returns a recorded snapshot: the bundled
resume-tiny trace, peak reserved 534773760 bytes), the test that fits passes and the one that does
not fails with `reservoir.GateFailed: <reason>`, the snapshot's path in the report."""

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

import reservoir
from api_support import SOURCE, TINY

STUB = SOURCE / "tests" / "python" / "stub_torch"
PACKAGE = os.path.dirname(os.path.dirname(reservoir.__file__))  # the folder `import reservoir` came from
PEAK = 534773760  # resume-tiny rank 0's peak reserved (tests/replay/gate_test.cpp's kPeakTiny)
LOAD_POINT = "after:state_dict_loader.py:load"

TESTS = f"""
import pytest


@pytest.mark.limit_reserved({PEAK})
def test_fits():
    pass


@pytest.mark.limit_reserved({PEAK - 1})
def test_does_not_fit():
    pass


@pytest.mark.limit_reserved("1GiB", cleanup=["{LOAD_POINT}"], capacity="80GB")
def test_fits_with_edits():
    pass


def test_fixture(reservoir_snapshot):
    trace = reservoir_snapshot()
    assert trace.whatif()["whatif"]["peak_reserved"] == {PEAK}
"""


@pytest.fixture
def run(pytester, monkeypatch):
    """run(*args, torch=True, snapshot=TINY): pytest in a fresh process with the plugin loaded from
    the package under test (and the stub torch, recording `snapshot`, when `torch`)."""

    def run_pytest(*args, torch=True, snapshot=TINY):
        paths = ([str(STUB)] if torch else []) + [PACKAGE]
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
        monkeypatch.setenv("COLUMNS", "400")  # the summary's lines whole
        if snapshot is not None:
            monkeypatch.setenv("STUB_TORCH_SNAPSHOT", str(snapshot))
        return pytester.runpytest_subprocess("-p", "reservoir.pytest_plugin", "-p", "no:cacheprovider", *args)

    return run_pytest


def test_the_marker_is_listed_and_accepted_under_strict_markers(pytester, run):
    result = run("--markers", torch=False)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["@pytest.mark.limit_reserved(budget, *"])
    pytester.makepyfile(test_m="import pytest\n@pytest.mark.limit_reserved('1GiB')\ndef test_x():\n    pass\n")
    result = run("--strict-markers", "-rs", torch=False)
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(skipped=1)


def test_the_plugin_imports_without_torch():
    code = "import sys, reservoir.pytest_plugin; assert 'torch' not in sys.modules and 'reservoir._core' not in sys.modules"
    env = dict(os.environ, PYTHONPATH=PACKAGE)
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_without_cuda_the_test_is_skipped_and_says_why(pytester, run):
    pytester.makepyfile(test_budget=TESTS)
    result = run("-rs", torch=False)
    result.assert_outcomes(skipped=4)
    result.stdout.fnmatch_lines(["*reservoir: limit_reserved needs torch with CUDA to record the test's allocator "
                                 "history: torch is not importable*"])
    result.stdout.fnmatch_lines(["*reservoir_snapshot needs torch with CUDA*"])


def test_without_a_visible_device_the_reason_says_so(pytester, run):
    pytester.makeconftest("import torch\ntorch.cuda.is_available = lambda: False\n")
    pytester.makepyfile(test_budget=TESTS)
    result = run("-rs")
    result.assert_outcomes(skipped=4)
    result.stdout.fnmatch_lines(["*torch.cuda.is_available() is False: no CUDA device is visible*"])


def test_a_recorded_snapshot_that_fits_passes_and_one_that_does_not_fails_with_the_reason(pytester, run, tmp_path):
    pytester.makepyfile(test_budget=TESTS)
    snapshots = tmp_path / "snapshots"
    report = tmp_path / "report.xml"
    result = run("-rA", f"--reservoir-snapshots={snapshots}", f"--junitxml={report}")
    result.assert_outcomes(passed=3, failed=1)
    out = result.stdout.str()
    # The summary's line is the gate's one-line reason, as `reservoir.GateFailed: ...`.
    path = snapshots / "test_budget.py-test_does_not_fit.pickle"
    reason = (f"{path.name}: predicted peak reserved 510.00 MiB exceeds the budget 510.00 MiB by 1 bytes "
              f"({PEAK} > {PEAK - 1} bytes)")
    assert f"FAILED test_budget.py::test_does_not_fit - reservoir.GateFailed: {reason}" in out, out
    assert path.exists() and path.with_suffix(".json").exists()
    # The snapshot's path is in the report: its "reservoir" section and the junit properties.
    result.stdout.fnmatch_lines(["*- reservoir -*", f"snapshot: {path}"])
    cases = {c.get("name"): c for c in ET.parse(report).getroot().iter("testcase")}
    for name in ("test_fits", "test_does_not_fit", "test_fits_with_edits"):
        props = {p.get("name"): p.get("value") for p in cases[name].iter("property")}
        assert props.get("reservoir_snapshot") == str(snapshots / f"test_budget.py-{name}.pickle"), props
    assert "reservoir/api.py" not in out and "def gate(" not in out  # no frame of the library's call
    # The recording is what the gate judged: the same verdict from the file.
    with pytest.raises(reservoir.GateFailed) as e:
        reservoir.gate(path, PEAK - 1)
    assert str(e.value) == f"{path}: " + reason.split(": ", 1)[1]


def test_a_wrong_marker_fails_the_test_with_what_is_wrong(pytester, run):
    pytester.makepyfile(test_bad="""
        import pytest

        @pytest.mark.limit_reserved("1GiB", cleanp=["x"])
        def test_typo():
            pass

        @pytest.mark.limit_reserved()
        def test_nothing():
            pass

        @pytest.mark.limit_reserved("80G")
        def test_ambiguous():
            pass
    """)
    result = run("-rA")
    result.assert_outcomes(errors=2, failed=1)
    out = result.stdout.str()
    assert "unknown keyword(s) cleanp" in out and "give a budget ('40GiB') or capacity=" in out
    assert "max_peak_reserved: '80G' is ambiguous" in out


def test_a_test_that_fails_by_itself_keeps_its_snapshot(pytester, run, tmp_path):
    pytester.makepyfile(test_own="""
        import pytest

        @pytest.mark.limit_reserved("1GiB")
        def test_broken():
            assert 1 == 2
    """)
    result = run("-rA", f"--reservoir-snapshots={tmp_path}")
    result.assert_outcomes(failed=1)
    assert "GateFailed" not in result.stdout.str()
    assert (tmp_path / "test_own.py-test_broken.pickle").exists()
