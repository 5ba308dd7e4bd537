"""The kit's captures in tests/data/traces/capture (recorded on an H200, docs/capture.md):
their sidecars carry what `reservoir` and `reservoir scale` need, and `reservoir check` replays
them exactly with the peaks reset where the sidecar says (check reads it by itself; at another point
resume-w8-main's peaks differ).
The C++ conformance tests pick the same files up (tests/replay/trace_cases.h)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import SOURCE

DATA = Path(os.environ.get("RESERVOIR_TEST_DATA_DIR", SOURCE / "tests" / "data")) / "traces" / "capture"
CAPTURES = sorted(p.name[: -len(".pickle.zst")] for p in DATA.glob("*.pickle.zst"))
SHARED_KEYS = ("world_size", "rank", "config", "device_total", "device_free", "fraction", "alloc_conf", "torch",
               "memory_stats", "reset_peaks_after_event")


def facts(name):
    return json.loads((DATA / f"{name}.json").read_text())


def check(name, *extra):
    binary = os.environ.get("RESERVOIR_BIN")
    if not binary:
        pytest.skip("RESERVOIR_BIN is not set (CTest sets it to the built reservoir)")
    return subprocess.run([binary, "check", str(DATA / f"{name}.pickle.zst"), *extra], capture_output=True, text=True,
                          timeout=300)


def test_the_captures_are_there():
    assert set(CAPTURES) >= {"resume-w8-main.rank0", "train-fsdp-w16-base.rank0"}


@pytest.mark.parametrize("name", CAPTURES)
def test_the_sidecar_has_every_key_a_prediction_needs(name):
    f = facts(name)
    for key in SHARED_KEYS + ("device_name", "overhead_outside_cache", "fsdp_groups", "events"):
        assert key in f, key
    assert 0 <= f["reset_peaks_after_event"] < f["events"]
    assert f["capture"]["fake_group"] is True and f["world_size"] > 1
    assert f["overhead_outside_cache"] == (f["device_total"] - f["device_free"]
                                           - f["memory_stats"]["reserved_bytes.all.current"])
    params = [p for g in f["fsdp_groups"] for p in g["params"]]
    assert params and all(p["local_shape"][0] * f["world_size"] >= p["shape"][0] for p in params)


@pytest.mark.parametrize("name", CAPTURES)
def test_check_is_exact_with_the_sidecars_reset_point(name):
    r = check(name, "--reset-peaks", f"event:{facts(name)['reset_peaks_after_event']}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "EXACT" in r.stdout and "memory_stats() values equal the capture's" in r.stdout


@pytest.mark.parametrize("name", CAPTURES)
def test_check_takes_the_reset_point_from_the_sidecar_by_itself(name):
    r = check(name)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "EXACT" in r.stdout and "reset_peaks_after_event" in r.stdout


def test_without_the_reset_point_the_peaks_of_the_resumed_run_differ():
    r = check("resume-w8-main.rank0", "--no-capture-json", "--reset-peaks", "event:0")
    assert r.returncode == 0 and "statistics" not in r.stdout, r.stdout  # no sidecar: no statistics to compare
    r = check("resume-w8-main.rank0", "--reset-peaks", "event:0")
    assert r.returncode == 1 and "statistics mismatch" in r.stdout, r.stdout
