"""reservoir's Python API on the bundled sample traces: loading from a path, bytes and the dict
torch.cuda.memory._snapshot() returns; the results are the command line's --json."""

import json
import pickle
import subprocess
import sys

import pytest

import reservoir
from api_support import EXPANDABLE, LOAD_POINT, TINY, cli_json, cli_json_in_python_words, run_cli


def capture_json(path):
    return path.with_suffix(".json")


def snapshot_dict(path):
    # What torch.cuda.memory._snapshot() returns is the dict these samples were pickled from (plain
    # dicts, lists, strings and numbers); the test unpickles its own trusted sample to get one.
    with open(path, "rb") as f:
        return pickle.load(f)


def test_import_needs_neither_torch_nor_the_extension():
    code = ("import sys, reservoir; assert 'torch' not in sys.modules; "
            "assert 'reservoir._core' not in sys.modules; reservoir.load; assert 'reservoir._core' in sys.modules; "
            "assert 'torch' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_dict_bytes_and_file_give_identical_results():
    name = str(TINY)
    loaded = [
        reservoir.load(TINY),
        reservoir.load(TINY.read_bytes(), name=name, capture=capture_json(TINY)),
        reservoir.load(snapshot_dict(TINY), name=name, capture=capture_json(TINY)),
    ]
    edits = dict(cleanup=[LOAD_POINT], probe=[LOAD_POINT])
    results = [(t.info(), t.check(), t.whatif(**edits), t.sweep(top=3, jobs=1)) for t in loaded]
    for (info, check, whatif, sweep) in results[1:]:
        info = dict(info)
        file_info = dict(results[0][0])
        # Only how the snapshot was stored may differ (the dict is pickled here, not read from disk).
        for key in ("file_bytes", "compression", "pickle_protocol"):
            info.pop(key, None)
            file_info.pop(key, None)
        assert info == file_info
        assert check == results[0][1]
        assert whatif == results[0][2]
        for s in (sweep, results[0][3]):
            s.pop("seconds", None)
        assert sweep == results[0][3]
    check = results[0][1]
    assert check["first_divergence"] is None and check["events_compared"] == loaded[0].events > 0
    assert check["stats_compared"] > 0  # the capture JSON was used for the bytes and the dict too


def test_whatif_has_the_keys_of_the_command_line_json():
    t = reservoir.load(TINY)
    r = t.whatif(cleanup=[LOAD_POINT], probe=[LOAD_POINT])
    assert r["whatif"]["probes"][LOAD_POINT]["reserved"] <= r["baseline"]["probes"][LOAD_POINT]["reserved"]
    assert r == cli_json("whatif", TINY, "--cleanup", LOAD_POINT, "--probe", LOAD_POINT)


def test_every_command_equals_the_command_line():
    t = reservoir.load(EXPANDABLE)
    assert t.info(peak_allocated=True) == cli_json("info", EXPANDABLE, "--peak-allocated")
    assert t.info() == cli_json_in_python_words("info", EXPANDABLE) != cli_json("info", EXPANDABLE)
    check = t.check()
    # The same report; a note that names an option names Python's keyword where the CLI names its flag.
    assert check == cli_json_in_python_words("check", EXPANDABLE) != cli_json("check", EXPANDABLE)
    assert any("reset_peaks=['event:985'] pins it" in n for n in check["notes"])
    sweep = t.sweep(top=5, jobs=1, settings=False)
    cli_sweep = cli_json("sweep", EXPANDABLE, "--top", 5, "--jobs", 1, "--no-settings")
    sweep.pop("seconds", None)
    cli_sweep.pop("seconds", None)
    for c in sweep["candidates"] + sweep["pareto"]:  # Python's candidates add the keywords that reproduce them
        assert c.pop("kwargs") == {"cleanup": [c["changes"][0]["point"]]}, c
    assert sweep == cli_sweep
    assert sweep["candidates"], "a sweep with no candidates tests nothing"
    r = t.whatif(set="expandable_segments:False", capacity="40GiB", overhead=512 << 20)
    assert r == cli_json("whatif", EXPANDABLE, "--set", "expandable_segments:False", "--capacity", "40GiB",
                         "--overhead", str(512 << 20))


def test_several_ranks_give_the_maximum_over_them():
    rank1 = TINY.with_name("resume-main.rank1.pickle")
    r = reservoir.whatif([TINY, rank1], cleanup=[LOAD_POINT])
    assert [x["trace"] for x in r["traces"]] == [str(TINY), str(rank1)]
    peaks = [x["whatif"]["peak_reserved"] for x in r["traces"]]
    assert r["max_over_traces"]["whatif_peak_reserved"] == max(peaks)
    assert r == cli_json("whatif", TINY, rank1, "--cleanup", LOAD_POINT)


def test_gate_passes_at_the_peak_and_fails_one_byte_below_with_the_reason():
    t = reservoir.load(TINY)
    peak = t.whatif()["whatif"]["peak_reserved"]
    ok = reservoir.gate(t, max_peak_reserved=peak)
    assert ok["pass"] is True
    with pytest.raises(AssertionError) as failed:
        reservoir.gate([str(TINY)], max_peak_reserved=peak - 1)
    assert isinstance(failed.value, reservoir.GateFailed)
    reason = str(failed.value)
    assert "\n" not in reason and str(TINY) in reason
    rc, out, _ = run_cli("gate", TINY, "--max-peak-reserved", str(peak - 1))
    assert rc == 1 and out.strip() == "FAIL: " + reason
    assert failed.value.result["pass"] is False


def test_gate_needs_a_condition():
    with pytest.raises(ValueError, match="gate needs a condition"):
        reservoir.gate(TINY)


def test_export_writes_a_snapshot_that_loads_back(tmp_path):
    t = reservoir.load(TINY)
    out, csv = tmp_path / "edited.pickle", tmp_path / "edited.csv"
    r = t.export(out, csv=csv, cleanup=[LOAD_POINT])
    assert r["events"] > 0 and r["rows"] > 0
    assert len(csv.read_text().splitlines()) == r["rows"] + 1  # a header, then one row per op
    back = reservoir.load(out, capture_json=False)
    assert back.events == r["events"]
    edited = t.whatif(cleanup=[LOAD_POINT])["whatif"]["peak_reserved"]
    assert back.info()["devices"][0]["peak_reserved"] == edited


def test_progress_is_reported_on_the_calling_thread():
    import threading

    calls = []
    reservoir.load(EXPANDABLE).sweep(jobs=1, progress=lambda d, n: calls.append((d, n, threading.get_ident())))
    assert calls, "a sweep of this length reports progress"
    assert all(thread == threading.get_ident() for _, _, thread in calls)
    assert all(0 <= d <= n for d, n, _ in calls)


def test_python_m_reservoir_runs_the_command_line():
    p = subprocess.run([sys.executable, "-m", "reservoir", "info", str(TINY), "--json", "--peak-allocated"],
                       capture_output=True, text=True, check=True)
    assert json.loads(p.stdout) == reservoir.load(TINY).info(peak_allocated=True)
    p = subprocess.run([sys.executable, "-m", "reservoir", "whatif", "/no/such.pickle"], capture_output=True, text=True)
    assert p.returncode == 3 and "/no/such.pickle" in p.stderr


def test_a_gate_it_cannot_judge_raises_a_value_error_naming_capacity():
    # A demand with no capacity known (no recorded out-of-memory, none given) cannot be judged:
    # the command line exits 2 (a usage error); Python raises GateUndecided, a ValueError.
    demand = "1GiB@" + LOAD_POINT
    with pytest.raises(ValueError) as undecided:
        reservoir.gate(TINY, demand=[demand])
    e = undecided.value
    assert isinstance(e, reservoir.GateUndecided) and not isinstance(e, AssertionError)
    assert e.result["undecided"] is True and e.missing == "capacity" == e.result["missing"]
    assert str(e).endswith("(give capacity=)") and "--" not in str(e)
    rc, out, _ = run_cli("gate", TINY, "--demand", demand)
    assert rc == 2 and out.strip().endswith("(give --capacity)")
    assert out.strip()[len("UNDECIDED: "):-len("(give --capacity)")] == str(e)[:-len("(give capacity=)")]
    # With a capacity it is judged: 1 GiB fits beside this small run on 80 GiB.
    assert reservoir.gate(TINY, demand=[demand], capacity="80GiB")["pass"] is True


def _torchtitan_dump(root):
    """A torchtitan dump folder built from resume-tiny's two ranks: iteration_1 holds them swapped."""
    import shutil
    for it in ("iteration_1", "iteration_3"):
        d = root / "memory_snapshot" / it
        d.mkdir(parents=True)
        for r in (0, 1):
            src = r if it == "iteration_3" else 1 - r
            base = str(TINY.parent / f"resume-main.rank{src}")
            shutil.copy(base + ".pickle", d / f"rank{r}_memory_snapshot.pickle")
            shutil.copy(base + ".json", d / f"rank{r}_memory_snapshot.json")
    return root


def test_a_dump_folder_is_its_ranks(tmp_path):
    dump = _torchtitan_dump(tmp_path)
    ranks = reservoir.load_dir(dump)
    assert [t.path for t in ranks] == [str(dump / "memory_snapshot" / "iteration_3" / f"rank{r}_memory_snapshot.pickle")
                                       for r in (0, 1)]
    assert [t.path for t in reservoir.load_dir(dump, iteration=1)] == [
        str(dump / "memory_snapshot" / "iteration_1" / f"rank{r}_memory_snapshot.pickle") for r in (0, 1)]
    # The module-level calls take the folder; results keep each path and add the rank, as the CLI's.
    checked = reservoir.check(dump)
    assert checked["exact"] == 2
    assert [t["rank"] for t in checked["traces"]] == [0, 1]
    assert checked == cli_json_in_python_words("check", str(dump))
    verdict = reservoir.gate(str(dump / "memory_snapshot"), "100GiB")
    assert [t["rank"] for t in verdict["traces"]] == [0, 1]
    with pytest.raises(ValueError, match=r"iteration=: .* has no iteration 2 \(its iterations: 1, 3\)"):
        reservoir.load_dir(dump, iteration=2)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(reservoir.TraceError, match="no snapshots in this folder"):
        reservoir.load_dir(empty)


def test_info_runs_the_conformance_replay_only_when_asked():
    trace = reservoir.load(TINY)
    fast, slow = trace.info(), trace.info(peak_allocated=True)
    assert fast["devices"][0]["peak_allocated"] is None
    assert fast["devices"][0]["conformance_replay"]["run"] is False
    assert "give peak_allocated=" in fast["devices"][0]["peak_allocated_note"]
    assert slow["devices"][0]["peak_allocated"] == 441454080
    assert slow["devices"][0]["conformance_replay"]["run"] is True
