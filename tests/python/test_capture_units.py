"""The kit's pieces on their own: trace marks, --param parsing, the sidecar, importing the
package without torch, and the context manager in this process (stub torch)."""

import json
import os
import subprocess
import sys

import pytest

from conftest import KIT_PATHS
from reservoir.capture import CaptureError, sidecar, trace_index


def ev(t, action="alloc", addr=0, size=1):
    return {"time_us": t, "action": action, "addr": addr, "size": size, "stream": 0}


def test_a_mark_is_found_again_after_the_ring_buffer_dropped_events():
    trace = [ev(t) for t in range(10)]
    m = trace_index.mark(0, trace[:6])  # after event 5
    assert m.index == 5
    assert trace_index.locate(m, trace) == 5
    assert trace_index.locate(m, trace[3:]) == 2  # three oldest events dropped
    assert trace_index.locate(m, trace[6:]) is None  # its event has left the window
    assert trace_index.locate(trace_index.mark(0, []), trace) is None  # before any event


def test_the_busiest_device_is_the_one_with_most_events():
    assert trace_index.busiest_device([[ev(1)], [ev(1), ev(2)]], 0) == 1
    assert trace_index.busiest_device([[ev(1)], [ev(2)]], 1) == 1  # a tie: the current device
    assert trace_index.busiest_device([], 0) == 0


def test_param_values_keep_their_type():
    assert sidecar.parse_params(["seq=8192", "lr=1e-4", "name=a=b", "flag=False"]) == {
        "seq": 8192, "lr": 1e-4, "name": "a=b", "flag": False}
    with pytest.raises(ValueError, match="NAME=VALUE"):
        sidecar.parse_params(["=3"])


def test_overhead_is_what_the_cache_does_not_hold():
    assert sidecar.overhead_outside_cache(100, 30, {"reserved_bytes.all.current": 50}) == 20
    assert sidecar.overhead_outside_cache(100, 30, {}) is None


def test_the_sidecar_puts_the_shared_keys_first_and_the_reset_only_when_known(tmp_path):
    facts = {"world_size": 8, "rank": 0, "device_total": 100, "device_free": 30}
    data = sidecar.build(facts=facts, memory_stats={"reserved_bytes.all.current": 50}, reset_index=7,
                         extra={"events": 9})
    assert list(data)[:2] == ["world_size", "rank"] and data["reset_peaks_after_event"] == 7
    assert "reset_peaks_after_event" not in sidecar.build(facts=facts, memory_stats={}, reset_index=None, extra={})
    path = str(tmp_path / "sub" / "x.json")
    sidecar.write_json(path, data)
    assert json.loads(open(path).read()) == data and not os.path.exists(path + ".partial")


def test_the_package_imports_without_torch_and_capture_is_callable():
    code = ("import sys, reservoir; c = reservoir.capture; "
            "print(callable(c), 'torch' in sys.modules, c.capture is reservoir.capture.capture)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(KIT_PATHS))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "False", "True"]


def test_the_context_manager_writes_the_snapshot_and_restores_torch(stub_torch, tmp_path):
    import reservoir

    original_reset = stub_torch.cuda.reset_peak_memory_stats
    with reservoir.capture(str(tmp_path / "run"), max_entries=1000, params={"seq": 4}) as cap:
        stub_torch.cuda._stub_alloc(64)
        stub_torch.cuda.reset_peak_memory_stats()
        assert stub_torch.cuda.reset_peak_memory_stats is not original_reset
        stub_torch.cuda._stub_alloc(32)
    assert stub_torch.cuda.reset_peak_memory_stats is original_reset
    assert stub_torch.cuda.memory._state["recording"] is False  # recording stopped at exit
    facts = json.loads((tmp_path / "run.json").read_text())
    assert facts["reset_peaks_after_event"] == 1 and facts["config"] == {"seq": 4}
    assert facts["capture"]["fake_group"] is False and facts["capture"]["max_entries"] == 1000
    assert (tmp_path / "run.pickle").exists() and cap.dumps == ["exit"]


def test_the_context_manager_dumps_on_an_exception_and_lets_it_through(stub_torch, tmp_path):
    import reservoir

    with pytest.raises(KeyError):
        with reservoir.capture(str(tmp_path / "run.pickle")):
            stub_torch.cuda._stub_alloc(64)
            raise KeyError("x")
    facts = json.loads((tmp_path / "run.json").read_text())
    assert facts["dump_reason"] == "exception" and facts["exception"] == "KeyError: 'x'"


def test_bad_options_are_refused_before_anything_starts():
    import reservoir

    with pytest.raises(CaptureError, match="stacks must be one of"):
        reservoir.capture("x", stacks="cpp")
    with pytest.raises(CaptureError, match="fake_group needs world_size"):
        reservoir.capture("x", fake_group=True)
