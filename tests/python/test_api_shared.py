"""The Python API and the command line agree on every shared resume trace (../shared/traces/resume-*,
beside the checkout; skipped when absent): whatif --json per trace and over each run's ranks."""

import json
import re
from collections import defaultdict

import pytest

import reservoir
from api_support import LOAD_POINT, cli_json, cli_json_in_python_words, in_python_words, run_cli, shared_traces

SHARED = shared_traces()
TRACES = sorted(SHARED.glob("resume-*/*.pickle")) if SHARED else []
EDITS = dict(cleanup=[LOAD_POINT], probe=[LOAD_POINT])
SETTINGS = dict(set="expandable_segments:False")


def runs():
    ranks = defaultdict(list)
    for t in TRACES:
        ranks[re.sub(r"\.rank\d+\.pickle$", "", str(t))].append(t)
    return [r for r in ranks.values() if len(r) > 1]


def cli_args(kwargs):
    args = []
    for key, value in kwargs.items():
        for v in [value] if isinstance(value, str) else value:
            args += ["--" + key.replace("_", "-"), v]
    return args


def whatif_both(paths, kwargs):
    """whatif through Python and through the command line; their answers (or refusals) must agree."""
    rc, out, err = run_cli("whatif", *paths, *cli_args(kwargs), "--json")
    if rc != 0:
        # The command line refuses (e.g. a fresh run has no checkpoint load): Python refuses the same way.
        assert rc == 2, err  # a point that matches nothing: a usage error
        with pytest.raises(ValueError) as e:
            reservoir.whatif(paths, **kwargs)
        assert err.strip() == "reservoir: " + str(e.value)
        return None
    python = reservoir.whatif(paths, **kwargs)
    assert python == in_python_words(json.loads(out))
    return python


@pytest.mark.skipif(not SHARED, reason="../shared/traces is not beside this checkout: the real-trace tests need it")
@pytest.mark.parametrize("path", TRACES, ids=[f"{t.parent.name}/{t.name}" for t in TRACES])
def test_whatif_equals_the_command_line(path):
    r = whatif_both([path], EDITS) or whatif_both([path], SETTINGS)
    assert r is not None and r["trace"] == str(path)


@pytest.mark.skipif(not SHARED, reason="../shared/traces is not beside this checkout: the real-trace tests need it")
def test_every_run_over_its_ranks_equals_the_command_line():
    assert runs(), "no multi-rank runs found"
    for paths in runs():
        r = whatif_both(paths, SETTINGS)
        assert r["max_over_traces"]["whatif_peak_reserved"] == max(t["whatif"]["peak_reserved"] for t in r["traces"])


@pytest.mark.skipif(not SHARED, reason="../shared/traces is not beside this checkout: the real-trace tests need it")
def test_check_equals_the_command_line_on_every_trace():
    for path in TRACES:
        assert reservoir.load(path).check() == cli_json_in_python_words("check", path)


SYNTH = SHARED / "synth" if SHARED else None


@pytest.mark.skipif(not SHARED, reason="../shared/traces is not beside this checkout: the real-trace tests need it")
def test_a_missing_fraction_is_named_in_python_words():
    path = SYNTH / "gcthresh-s5.pickle"
    r = reservoir.load(path, capture_json=False).check()
    assert not r["exact"]
    assert r["missing_fraction"]["fraction"] == 0.05
    assert any("fraction=0.05 makes the replay exact" in n for n in r["notes"]), r["notes"]
    assert r == cli_json_in_python_words("check", path, "--no-capture-json")
    assert reservoir.load(path, capture_json=False).check(fraction=0.05)["exact"]


@pytest.mark.skipif(not SHARED, reason="../shared/traces is not beside this checkout: the real-trace tests need it")
def test_set_empty_is_torchs_defaults():
    t = reservoir.load(SYNTH / "expandable-s2.pickle")
    recorded, defaults = t.whatif(), t.whatif(set="")
    assert "expandable_segments:True" in recorded["settings"]["whatif"]
    assert "expandable_segments:True" not in defaults["settings"]["whatif"]
    assert defaults == in_python_words(cli_json("whatif", SYNTH / "expandable-s2.pickle", "--set", ""))
