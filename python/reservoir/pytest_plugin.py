"""reservoir's pytest plugin: a memory budget on a test, judged from the test's own allocator history.

    @pytest.mark.limit_reserved("40GiB", cleanup=["after:trainer.py:load_checkpoint"])
    def test_resume_fits(model):
        resume_and_train_one_step(model)

Where torch and CUDA are present, the plugin records the caching allocator's history from the
test's setup to the end of its body (the capture kit: a snapshot and its sidecar), replays it
through Reservoir's model under the marker's edits, and fails the test with the gate's one-line
reason (``reservoir.GateFailed: ...``) when the predicted peak reserved is over the budget (or,
with ``capacity=``, on a predicted out-of-memory). The snapshot's path is kept in the report (the
"reservoir" section and ``user_properties``). Without CUDA the test is skipped, saying why.

The marker takes reservoir.gate's keywords: capacity, overhead, fraction, set, cleanup, release,
probe, demand, reset_peaks, address_model. The ``reservoir_snapshot`` fixture is a callable that
gives the recording so far as a ``reservoir.Trace``.

Registered as the ``reservoir`` pytest11 entry point by the wheel; from a build tree,
``pytest -p reservoir.pytest_plugin``. Importing it needs neither torch nor the compiled part.
Options: ``--reservoir-snapshots DIR`` (where the recordings go; default: pytest's temporary
directory) and ``--reservoir-max-entries N`` (the history's ring; default 1,000,000 entries).
"""

from __future__ import annotations

import os
import re
import tempfile
from typing import Any, Dict, Optional

import pytest

MARKER = "limit_reserved"
GATE_KEYWORDS = frozenset(["capacity", "overhead", "fraction", "set", "cleanup", "release", "probe", "demand",
                           "reset_peaks", "address_model"])


def pytest_addoption(parser) -> None:
    group = parser.getgroup("reservoir", "reservoir: memory budgets from the test's allocator history")
    group.addoption("--reservoir-snapshots", metavar="DIR", default=None,
                    help="where the recorded snapshots go (default: pytest's temporary directory)")
    group.addoption("--reservoir-max-entries", metavar="N", type=int, default=1_000_000,
                    help="allocator history kept per test (a ring of N entries; default 1000000)")


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(budget, capacity=None, overhead=None, cleanup=None, set=None, ...): fail the test when the peak "
        "reserved memory Reservoir predicts from its recorded allocator history (under those edits: "
        "reservoir.gate's keywords) is over the budget ('40GiB', '40GB' or bytes); skipped without CUDA")


def cuda_missing() -> Optional[str]:
    """Why the test's allocator history cannot be recorded here, or None when it can."""
    try:
        import torch  # type: ignore[import]
    except ImportError as e:
        return f"torch is not importable ({e})"
    try:
        available = torch.cuda.is_available()
    except Exception as e:  # a broken CUDA install says so here
        return f"torch.cuda.is_available() failed: {e}"
    if not available:
        return "torch.cuda.is_available() is False: no CUDA device is visible"
    return None


class Recording:
    """One test's recording: the capture kit's Capture, started once, dumped on demand."""

    def __init__(self, stem: str, max_entries: int) -> None:
        self.stem = stem
        self.max_entries = max_entries
        self.capture: Any = None  # the kit's Capture while it records
        self.path: Optional[str] = None

    def start(self) -> None:
        """Empties the cache first (what earlier tests left cached is not this test's), then records."""
        import torch  # type: ignore[import]

        from reservoir.capture import Capture

        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        os.makedirs(os.path.dirname(self.stem) or ".", exist_ok=True)
        self.capture = Capture(self.stem, max_entries=self.max_entries, stacks="python",
                               tag=os.path.basename(self.stem))
        self.capture.__enter__()

    def dump(self, reason: str) -> str:
        """Writes the history so far (STEM.pickle and its sidecar STEM.json) and returns the path."""
        path: str = self.capture.dump(reason)
        self.path = path
        return path

    def trace(self):
        import reservoir

        return reservoir.load(self.dump("snapshot"))

    def stop(self) -> None:
        if self.capture is not None:
            capture, self.capture = self.capture, None
            capture.stop()


def _stem(item) -> str:
    folder = item.config.getoption("--reservoir-snapshots")
    if folder is None:
        factory = getattr(item.config, "_tmp_path_factory", None)  # what the tmp_path fixtures use
        folder = str(factory.getbasetemp() / "reservoir") if factory is not None else tempfile.mkdtemp()
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", item.nodeid).strip("-")[:180] or "test"
    return os.path.join(folder, name)


def _recording(item) -> Optional[Recording]:
    return getattr(item, "_reservoir_recording", None)


def _start(item) -> Recording:
    rec = _recording(item)
    if rec is None:
        rec = Recording(_stem(item), item.config.getoption("--reservoir-max-entries"))
        item._reservoir_recording = rec
        rec.start()
    return rec


def _marker_conditions(marker) -> Dict[str, Any]:
    """The marker's budget and edits as reservoir.gate's keywords; a wrong marker fails the test."""
    if len(marker.args) > 1:
        pytest.fail(f"@pytest.mark.{MARKER}: give one budget ('40GiB'), then keywords; got {len(marker.args)} "
                    "positional arguments", pytrace=False)
    kwargs = dict(marker.kwargs)
    unknown = sorted(set(kwargs) - GATE_KEYWORDS - {"max_peak_reserved"})
    if unknown:
        pytest.fail(f"@pytest.mark.{MARKER}: unknown keyword(s) {', '.join(unknown)} (it takes "
                    f"{', '.join(sorted(GATE_KEYWORDS))})", pytrace=False)
    if marker.args:
        if "max_peak_reserved" in kwargs:
            pytest.fail(f"@pytest.mark.{MARKER}: the budget is given twice", pytrace=False)
        kwargs["max_peak_reserved"] = marker.args[0]
    if kwargs.get("max_peak_reserved") is None and kwargs.get("capacity") is None:
        pytest.fail(f"@pytest.mark.{MARKER}: give a budget ('40GiB') or capacity=", pytrace=False)
    return kwargs


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item) -> None:
    """Before the test's fixtures are set up: a marked test is skipped without CUDA, else recorded."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return
    _marker_conditions(marker)
    missing = cuda_missing()
    if missing:
        pytest.skip(f"reservoir: {MARKER} needs torch with CUDA to record the test's allocator history: {missing}")
    _start(item)  # before the fixtures: what they allocate counts


@pytest.hookimpl(trylast=True)
def pytest_runtest_call(item) -> None:
    """After the test's body passed (this runs after it, in the same call phase): the gate."""
    marker = item.get_closest_marker(MARKER)
    rec = _recording(item)
    if marker is None or rec is None or rec.capture is None:
        return
    __tracebackhide__ = True
    import reservoir

    path = rec.dump("exit")
    rec.stop()
    # Named by its file's name in the reason (the whole path is in the report's section), so that
    # pytest's one-line summary shows the verdict, not a temporary directory.
    with open(path, "rb") as f:
        trace = reservoir.load(f.read(), name=os.path.basename(path), capture=path[: -len(".pickle")] + ".json")
    try:
        reservoir.gate(trace, **_marker_conditions(marker))
    except (reservoir.GateFailed, reservoir.GateUndecided) as verdict:
        _judged(verdict)


def _judged(verdict: Exception) -> None:
    """The gate's verdict on the test's recorded allocator history: its reason says why."""
    raise verdict.with_traceback(None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    rec = _recording(item)
    if rec is not None and rec.capture is not None and call.when == "call" and call.excinfo is not None:
        rec.dump("exception")  # the test failed by itself: its history is kept, not judged
    outcome = yield
    if rec is None or not rec.path or call.when != "call":
        return
    report = outcome.get_result()
    report.sections.append(("reservoir", f"snapshot: {rec.path}"))
    report.user_properties.append(("reservoir_snapshot", rec.path))
    item.user_properties.append(("reservoir_snapshot", rec.path))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item):
    yield
    rec = _recording(item)
    if rec is not None:
        rec.stop()
        item._reservoir_recording = None


@pytest.fixture
def reservoir_snapshot(request):
    """A callable: ``reservoir_snapshot()`` is the test's allocator history so far, as a
    reservoir.Trace (the recording starts before the test's fixtures; with the limit_reserved
    marker it is the one the gate judges). Skips the test without torch and CUDA."""
    item = request.node
    if _recording(item) is None:
        missing = cuda_missing()
        if missing:
            pytest.skip(f"reservoir: reservoir_snapshot needs torch with CUDA to record the allocator history: "
                        f"{missing}")
        _start(item)
    return lambda: _recording(item).trace()
