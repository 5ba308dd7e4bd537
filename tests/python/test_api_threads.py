"""Long calls release the GIL (another Python thread keeps running during a sweep) and stop on
Ctrl-C: KeyboardInterrupt, the work cancelled (the call returns well before the sweep would end)."""

import _thread
import threading
import time

import pytest

import reservoir
from api_support import EXPANDABLE

# A sweep on the bundled expandable trace, one thread, every candidate replayed: long enough to
# interrupt (0.4 s on the development machine).
SWEEP = dict(jobs=1, max_candidates=400)


@pytest.fixture(scope="module")
def trace():
    return reservoir.load(EXPANDABLE)


@pytest.fixture(scope="module")
def sweep_seconds(trace):
    start = time.monotonic()
    trace.sweep(**SWEEP)
    return time.monotonic() - start


def test_another_thread_runs_during_a_sweep(trace, sweep_seconds):
    assert sweep_seconds > 0.2, "the sweep is too short to tell"
    count = 0
    stop = threading.Event()

    def spin():
        nonlocal count
        while not stop.is_set():
            count += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.05)
        before = count
        trace.sweep(**SWEEP)
        during = count - before
    finally:
        stop.set()
        t.join()
    # With the GIL held for the whole sweep the spinning thread would not count at all (it would
    # only get the interpreter at the 50 ms wake-ups); released, it counts freely.
    assert during > 10_000, f"the other thread counted {during} during a {sweep_seconds:.2f} s sweep"


def test_ctrl_c_cancels_a_sweep(trace, sweep_seconds):
    if sweep_seconds < 0.2:
        pytest.skip(f"a full sweep takes {sweep_seconds:.2f} s here: too short to tell a cancel from the end")
    delay = sweep_seconds / 4
    timer = threading.Timer(delay, _thread.interrupt_main)
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            trace.sweep(**SWEEP)
    finally:
        timer.cancel()
    elapsed = time.monotonic() - start
    # Stopped within half a sweep of the Ctrl-C, not at the end of the sweep.
    assert elapsed < delay + sweep_seconds / 2, f"cancelled after {elapsed:.2f} s of {sweep_seconds:.2f} s"
    # The trace is still usable afterwards.
    assert trace.sweep(top=1, jobs=1, max_candidates=5)["candidates"]


def test_a_progress_callback_that_raises_stops_the_work(trace, sweep_seconds):
    class Stop(Exception):
        pass

    def progress(done, total):
        raise Stop(f"{done}/{total}")

    start = time.monotonic()
    with pytest.raises(Stop):
        trace.sweep(progress=progress, **SWEEP)
    if sweep_seconds >= 0.2:  # the first report comes after 50 ms
        assert time.monotonic() - start < 0.05 + sweep_seconds / 2


def test_calls_from_several_threads_at_once(trace):
    results = [None] * 4

    def work(i):
        results[i] = trace.whatif(cleanup=["after:state_dict_loader.py:load"])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == results[0] for r in results) and results[0]["saving"] >= 0
