"""Long calls release the GIL (another Python thread keeps running during a sweep) and stop on
Ctrl-C: KeyboardInterrupt, the work cancelled (the call returns well before the sweep would end)."""

import _thread
import signal
import threading
import time

import pytest

import reservoir
from api_support import EXPANDABLE, run_cli

# A synthetic trace of a million events (`reservoir synth`), swept on one thread: long enough to
# interrupt (1.5 s on the development machine) whatever the machine.
SWEEP = dict(jobs=1)


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    path = tmp_path_factory.mktemp("synth") / "synth-1m.pickle"
    rc, _, err = run_cli("synth", path, "--events", 1_000_000)
    assert rc == 0, err
    return reservoir.load(path)


@pytest.fixture(scope="module")
def sweep_seconds(trace):
    start = time.monotonic()
    trace.sweep(**SWEEP)
    return time.monotonic() - start


def spin_rate(seconds=0.2):
    """How fast a Python thread counts while the main thread sleeps (the GIL free)."""
    count = 0
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        for _ in range(1000):
            count += 1
    return count / seconds


def test_another_thread_runs_during_a_sweep(trace, sweep_seconds):
    count = 0
    stop = threading.Event()

    def spin():
        nonlocal count
        while not stop.is_set():
            for _ in range(1000):
                count += 1

    rate = spin_rate()
    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.05)
        before, start = count, time.monotonic()
        trace.sweep(**SWEEP)
        during, seconds = count - before, time.monotonic() - start
    finally:
        stop.set()
        t.join()
    # With the GIL held for the whole sweep the spinning thread would not count at all (it would
    # only get the interpreter at the 10 ms wake-ups, for microseconds); released, it counts at
    # about its own speed (less what other processes take of the cores).
    assert during > 0.2 * rate * seconds, f"counted {during} in {seconds:.2f} s; alone it counts {rate:.0f}/s"


def test_ctrl_c_cancels_a_sweep(trace, sweep_seconds):
    assert sweep_seconds > 0.2, "the sweep is too short to tell a cancel from its end"
    require_ctrl_c()
    delay = min(0.3, sweep_seconds / 4)
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
    assert trace.sweep(top=1, jobs=1, max_candidates=2)["evaluated"] == 2


def test_a_progress_callback_that_raises_stops_the_work(trace, sweep_seconds):
    class Stop(Exception):
        pass

    def progress(done, total):
        raise Stop(f"{done}/{total}")

    start = time.monotonic()
    with pytest.raises(Stop):
        trace.sweep(progress=progress, **SWEEP)
    assert time.monotonic() - start < 0.05 + sweep_seconds * 3 / 4  # the first report comes after 10 ms


def test_calls_from_several_threads_at_once(trace):
    results = [None] * 4

    sample = reservoir.load(EXPANDABLE)

    def work(i):
        results[i] = sample.whatif(cleanup=["after:state_dict_loader.py:load"])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == results[0] for r in results) and results[0]["saving"] >= 0


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A synthetic trace of 3 million events: its sweep's preparation and baseline pass alone take
    longer than Ctrl-C may (the issue measured 0.77 s from Ctrl-C to the end of a cancelled sweep)."""
    path = tmp_path_factory.mktemp("synth3m") / "synth-3m.pickle"
    rc, _, err = run_cli("synth", path, "--events", 3_000_000)
    assert rc == 0, err
    return reservoir.load(path)


def require_ctrl_c():
    """Ctrl-C reaches Python only where Python handles SIGINT: a script that starts a job in the
    background without job control (`cmd &`) leaves SIGINT ignored for it, Python keeps that, and
    _thread.interrupt_main() then does nothing ("DID NOT RAISE" said nothing of why)."""
    assert signal.getsignal(signal.SIGINT) not in (signal.SIG_IGN, signal.SIG_DFL, None), (
        "SIGINT is ignored in this process (started in the background by a script, without job "
        "control?): Ctrl-C cannot be tested here; run the suite in the foreground"
    )


def interrupted_after(delay, call):
    """Runs call(), Ctrl-C after `delay` seconds; returns the seconds from the Ctrl-C to the
    KeyboardInterrupt (it must come: the work takes longer than `delay`)."""
    require_ctrl_c()
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        _thread.interrupt_main()

    timer = threading.Timer(delay, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
    assert sent, "the call ended before the Ctrl-C"
    return time.monotonic() - sent[0]


# The calling thread wakes every 10 ms, and the work looks at the cancel flag every 4096 events
# and between its passes over the trace: a few tens of milliseconds on an idle machine, up to
# 0.21 s measured on this two-core machine at a load of 8. The bound leaves room for that; before,
# a cancel during the sweep's first 0.45 s waited for it to end (0.6-0.77 s).
CANCEL_BOUND = 0.4


@pytest.mark.parametrize("delay", [0.05, 0.3, 0.8])
def test_ctrl_c_stops_a_3m_event_sweep_within_milliseconds(big, delay):
    late = interrupted_after(delay, lambda: big.sweep(jobs=1))
    assert late < CANCEL_BOUND, f"the sweep stopped {late:.3f} s after Ctrl-C"


def test_ctrl_c_stops_an_export_early_and_leaves_no_file(big, tmp_path):
    out, csv = tmp_path / "big-export.pickle", tmp_path / "big-export.csv"
    late = interrupted_after(0.3, lambda: big.export(out, csv=csv))
    assert late < CANCEL_BOUND, f"the export stopped {late:.3f} s after Ctrl-C"
    assert list(tmp_path.iterdir()) == [], "an interrupted export left files"
