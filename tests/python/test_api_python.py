"""reservoir plays well with Python: the module-level commands over several ranks, sweep candidates
as keywords, pickling (Traces and exceptions, multiprocessing), importlib.reload, main() through
sys.stdout, exceptions as `reservoir.X`, __version__, the stubs, plain dicts from OrderedDicts,
and the export's output checks."""

import collections
import contextlib
import importlib
import io
import json
import multiprocessing
import os
import pickle
import re
import shutil
import subprocess
import sys

import pytest

import reservoir
from api_support import EXPANDABLE, LOAD_POINT, SOURCE, TINY, cli_json, cli_json_in_python_words, run_cli

RANK1 = TINY.with_name("resume-main.rank1.pickle")


def test_version_is_the_projects():
    # The project's version is CMake's (pyproject.toml's is dynamic: the build backend reads CMakeLists.txt).
    assert reservoir.__version__ == re.search(r"project\(Reservoir VERSION ([0-9.]+)", (SOURCE / "CMakeLists.txt").read_text()).group(1)
    rc, out, _ = run_cli("--version")
    assert rc == 0 and out.split() == ["reservoir", reservoir.__version__]


def test_exceptions_read_reservoir_dot_name_and_have_docstrings():
    for name in ("TraceError", "TraceFileNotFoundError", "NothingToReplay", "GateFailed", "GateUndecided"):
        cls = getattr(reservoir, name)
        assert cls.__module__ == "reservoir" and cls.__doc__, name
    for attribute in (".headline", ".path", ".offset"):
        assert attribute[1:] in reservoir.TraceError.__doc__
    assert issubclass(reservoir.NothingToReplay, reservoir.TraceError)
    assert issubclass(reservoir.GateFailed, AssertionError) and issubclass(reservoir.GateUndecided, ValueError)


def test_exceptions_survive_pickle():
    with pytest.raises(reservoir.GateFailed) as failed:
        reservoir.gate(TINY, max_peak_reserved=1)
    with pytest.raises(reservoir.TraceError) as missing:
        reservoir.load("/no/such.pickle")
    with pytest.raises(reservoir.GateUndecided) as undecided:
        reservoir.gate(TINY, demand=["1GiB@" + LOAD_POINT])
    for e in (failed.value, missing.value, undecided.value):
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e) and str(back) == str(e)
    back = pickle.loads(pickle.dumps(failed.value))
    assert back.result == failed.value.result and back.reason == failed.value.reason
    back = pickle.loads(pickle.dumps(missing.value))
    assert (back.path, back.offset, back.headline) == (missing.value.path, None, missing.value.headline)
    assert isinstance(back, FileNotFoundError)
    assert pickle.loads(pickle.dumps(undecided.value)).missing == "capacity"


def gate_rank(path):
    reservoir.gate(path, max_peak_reserved="1MiB")


def whatif_peak(trace):
    return trace.whatif()["whatif"]["peak_reserved"]


def test_a_failing_gate_in_a_pool_worker_reaches_the_parent():
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        with pytest.raises(reservoir.GateFailed, match="exceeds the budget"):
            pool.map(gate_rank, [str(TINY), str(RANK1)], chunksize=1)


@pytest.mark.parametrize("how", ["path", "bytes", "dict"])
def test_a_trace_pickles_and_pool_map_over_ranks_works(how):
    sources = {"path": lambda p: p, "bytes": lambda p: p.read_bytes(), "dict": lambda p: pickle.loads(p.read_bytes())}
    traces = [reservoir.load(sources[how](p), name=str(p)) if how != "path" else reservoir.load(p)
              for p in (TINY, RANK1)]
    for t in traces:
        back = pickle.loads(pickle.dumps(t))
        assert (back.path, back.device, back.events) == (t.path, t.device, t.events)
        assert back.whatif() == t.whatif()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(whatif_peak, traces) == [whatif_peak(t) for t in traces]


def test_reload_keeps_existing_traces_working():
    t = reservoir.load(TINY)
    before = t.whatif(cleanup=[LOAD_POINT])
    importlib.reload(reservoir.api)
    importlib.reload(reservoir)
    assert t.whatif(cleanup=[LOAD_POINT]) == before
    assert reservoir.whatif(t, cleanup=[LOAD_POINT]) == before
    assert reservoir.load(t) is t
    assert pickle.loads(pickle.dumps(t)).whatif(cleanup=[LOAD_POINT]) == before
    with pytest.raises(reservoir.TraceError):  # the classes stay the ones `except` names
        reservoir.load("/no/such.pickle")


def test_main_writes_through_sys_stdout_and_stderr():
    from reservoir.__main__ import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["info", str(TINY), "--json", "--peak-allocated"]) == 0
        assert main(["whatif", "/no/such.pickle"]) == 3
    assert json.loads(out.getvalue()) == reservoir.load(TINY).info(peak_allocated=True)
    assert "/no/such.pickle" in err.getvalue()


def test_main_raises_what_writing_its_output_raised():
    from reservoir.__main__ import main

    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    with contextlib.redirect_stdout(Closed()):
        with pytest.raises(BrokenPipeError):
            main(["info", str(TINY)])


def test_python_m_reservoir_says_when_its_output_is_lost():
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "reservoir", "info", str(TINY), "--json"], stdout=full,
                           stderr=subprocess.PIPE, text=True)
    assert p.returncode != 0 and "write failed: No space left on device" in p.stderr, (p.returncode, p.stderr)


def test_main_through_capsys(capsys):
    from reservoir.__main__ import main

    assert main(["check", str(TINY)]) == 0
    assert "EXACT" in capsys.readouterr().out


def test_the_package_has_stubs_and_py_typed():
    folder = SOURCE / "python" / "reservoir"
    assert (folder / "py.typed").exists() and (folder / "_core.pyi").exists()
    stub = (folder / "_core.pyi").read_text()
    import reservoir._core as core

    public = [n for n in dir(core) if not n.startswith("_")]
    for name in public:
        assert re.search(rf"^(def|class) {name}\b", stub, re.M), f"_core.{name} has no stub"
    built = SOURCE / "build" / "python" / "reservoir"
    if (built / "_core.pyi").exists() or reservoir.__file__.startswith(str(SOURCE / "build")):
        assert (built / "py.typed").exists() and (built / "_core.pyi").exists()


def test_every_public_call_has_a_docstring():
    for name in ("load", "check", "whatif", "sweep", "gate", "scale"):
        assert getattr(reservoir, name).__doc__, name
    for name in ("info", "check", "whatif", "sweep", "gate", "export", "path", "device", "events"):
        assert getattr(reservoir.Trace, name).__doc__, name
    doc = reservoir.Trace.whatif.__doc__
    for words in ("after:FILE:NAME", "annotation:NAME:start|end", "event:N", '"baseline"', '"whatif"',
                  '"peak_reserved"', '"probes"', "capacity_source"):
        assert words in doc, words


def test_module_level_calls_over_ranks_equal_the_command_line():
    check = reservoir.check([TINY, RANK1])
    assert check == cli_json_in_python_words("check", TINY, RANK1)
    assert check["exact"] == 2 and [t["trace"] for t in check["traces"]] == [str(TINY), str(RANK1)]
    sweep = reservoir.sweep([TINY, RANK1], top=4, jobs=1, settings=False)
    cli = cli_json("sweep", TINY, RANK1, "--top", 4, "--jobs", 1, "--no-settings")
    for s in (sweep, cli):
        s.pop("seconds", None)
    for c in sweep["candidates"] + sweep["pareto"]:
        c.pop("kwargs")
    assert sweep == cli and sweep["traces"] == [str(TINY), str(RANK1)]
    jobs = reservoir.whatif([TINY, RANK1], jobs=2, cleanup=[LOAD_POINT])
    assert jobs == reservoir.whatif([TINY, RANK1], jobs=1, cleanup=[LOAD_POINT]) == \
        cli_json("whatif", TINY, RANK1, "--cleanup", LOAD_POINT)


def test_gate_takes_probe_and_reset_peaks():
    r = reservoir.gate([TINY, RANK1], max_peak_reserved="40GiB", probe=[LOAD_POINT], reset_peaks=["event:10"])
    assert r == cli_json("gate", TINY, RANK1, "--max-peak-reserved", "40GiB", "--probe", LOAD_POINT,
                         "--reset-peaks", "event:10")


def test_a_candidates_keywords_reproduce_its_figures():
    t = reservoir.load(EXPANDABLE)
    s = t.sweep(top=100, jobs=1, capacity="40GiB")
    cleanups = [c for c in s["candidates"] if c["changes"][0]["kind"] == "cleanup"]
    settings = [c for c in s["candidates"] if c["changes"][0]["kind"] == "settings"]
    assert cleanups and settings
    for c in cleanups[:3] + settings:
        assert c["kwargs"]["capacity"] == "40GiB"
        r = t.whatif(**c["kwargs"])
        assert r["whatif"]["peak_reserved"] == c["peak_reserved"], c["description"]
        assert r["whatif"]["peak_allocated"] == c["peak_allocated"], c["description"]
    point = "before:broadcast_weights"
    s = t.sweep(minimize=point, top=2, jobs=1, settings=False)
    assert s["objective_point"] == point
    for c in s["candidates"]:
        assert t.whatif(**c["kwargs"])["whatif"]["probes"][point]["reserved"] == c["reserved_at_point"]


def test_sizes_in_gb_are_decimal_and_gib_binary():
    t = reservoir.load(TINY)
    assert t.whatif(capacity="80GB")["capacity"] == 80 * 10**9
    assert t.whatif(capacity="80GiB")["capacity"] == 80 * 2**30
    with pytest.raises(ValueError, match="ambiguous"):
        t.whatif(capacity="80G")


class Count(int):
    pass


def odd_types(snapshot):
    """The same snapshot with OrderedDicts and int / str subclasses where plain types were."""
    out = collections.OrderedDict(snapshot)
    traces = [[collections.OrderedDict(e, size=Count(e["size"])) for e in t] for t in snapshot["device_traces"]]
    out["device_traces"] = traces
    return out


def test_ordered_dicts_and_int_subclasses_load_as_plain_types():
    plain = pickle.loads(TINY.read_bytes())
    odd = odd_types(plain)
    assert reservoir.load(odd, name="odd").whatif() == reservoir.load(plain, name="odd").whatif()


def test_an_object_in_the_dict_is_named_not_called_code():
    plain = pickle.loads(TINY.read_bytes())
    plain["device_traces"][0][3]["frames"] = [object()]
    with pytest.raises(TypeError) as e:
        reservoir.load(plain)
    message = str(e.value)
    assert "builtins.object" in message and "['device_traces'][0][3]['frames'][0]" in message
    assert "run code" not in message and len(message) < 500


def test_export_refuses_its_inputs_and_two_outputs_in_one_file(tmp_path):
    folder = tmp_path / "t"
    folder.mkdir()
    trace_path = folder / TINY.name
    shutil.copy(TINY, trace_path)
    shutil.copy(TINY.with_suffix(".json"), folder / TINY.with_suffix(".json").name)
    sidecar = trace_path.with_suffix(".json")
    before = (trace_path.read_bytes(), sidecar.read_bytes())
    t = reservoir.load(trace_path)
    out = tmp_path / "o.pickle"
    cases = [dict(csv=trace_path), dict(path=trace_path), dict(path=out, csv=out), dict(csv=sidecar),
             dict(path=str(folder / "." / TINY.name))]
    for kwargs in cases:
        with pytest.raises(ValueError) as e:
            t.export(**kwargs)
        assert "write to another file" in str(e.value) or "give two files" in str(e.value), str(e.value)
    with pytest.raises(ValueError, match="NUL byte"):
        t.export(csv=str(tmp_path / "o.csv") + "\0x")
    assert (trace_path.read_bytes(), sidecar.read_bytes()) == before and not out.exists()
    # The capture JSON a snapshot from memory was read with is an input too.
    from_bytes = reservoir.load(trace_path.read_bytes(), capture=sidecar)
    with pytest.raises(ValueError, match="capture JSON"):
        from_bytes.export(csv=sidecar)
    assert sidecar.read_bytes() == before[1]
    assert t.export(out, csv=tmp_path / "o.csv")["events"] > 0


SHARED_SCALE = SOURCE.parent / "shared" / "traces" / "scale"


@pytest.mark.skipif(not (SHARED_SCALE / "w2-s4096.rank0.pickle").exists(), reason="../shared/traces/scale is absent")
def test_scale_equals_the_command_line(tmp_path):
    a, b = SHARED_SCALE / "w2-s4096.rank0.pickle", SHARED_SCALE / "w4-s4096.rank0.pickle"
    one = reservoir.scale([a, b], to={"world": 8}, capacity="141GiB")
    assert one == cli_json("scale", "--from", a, "--from", b, "--to", "world=8", "--capacity", "141GiB")
    grid = reservoir.scale([str(a), str(b)], "world=8,16")
    assert grid == cli_json("scale", "--from", a, "--from", b, "--to", "world=8,16")
    assert reservoir.scale([a, b], to={"world": [8, 16]}) == grid
    params = [json.loads(p.with_suffix(".json").read_text()) for p in (a, b)]
    pairs = [({"world": p["world_size"], **{k: v for k, v in p["config"].items() if isinstance(v, int)
                                             and not isinstance(v, bool)}}, reservoir.load(x))
             for p, x in zip(params, (a, b))]
    assert reservoir.scale(pairs, to={"world": 8}, capacity="141GiB") == one
    spec = f"world=2,seq=4096:{a}"
    assert reservoir.scale([spec, f"world=4,seq=4096:{b}"], to="world=8")["target"]["world"] == 8
    out = tmp_path / "w8.pickle"
    r = reservoir.scale([a, b], to={"world": 8}, out=out, measured=a)
    assert r["out"] == str(out) and reservoir.load(out).events > 0 and "check" in r
    with pytest.raises(ValueError, match="out"):
        reservoir.scale([a, b], to={"world": 8}, out=a)  # an input is never written over
    with pytest.raises(ValueError):
        reservoir.scale([a, b], to={"world": [8, 16]}, out=out)


SHARED_MIXED = SOURCE.parent / "shared" / "traces" / "scale-mixed"


@pytest.mark.skipif(not (SHARED_MIXED / "w2-s4096-b2.rank0.pickle").exists(), reason="../shared/traces/scale-mixed is absent")
def test_scale_names_the_captures_to_add_as_the_command_line_does():
    three = [SHARED_MIXED / f"{t}.rank0.pickle" for t in ("w2-s4096-b2", "w4-s8192-b2", "w8-s8192-b1")]
    r = reservoir.scale(three, to={"world": 96, "seq": 32768, "batch": 1})
    assert r == cli_json("scale", *sum([["--from", p] for p in three], []), "--to", "world=96,seq=32768,batch=1")
    assert r["model"]["sizes_exact"] is False
    assert r["model"]["undetermined"] and all(u["add_capture"] for u in r["model"]["undetermined"])
    with pytest.raises(ValueError, match="must be at least 1"):
        reservoir.scale(three, to={"world": 0, "seq": 32768, "batch": 1})


def test_scale_arguments_are_checked():
    with pytest.raises(TypeError):
        reservoir.scale(str(TINY), to={"world": 2})
    with pytest.raises(TypeError, match="to="):
        reservoir.scale([TINY])
    with pytest.raises(TypeError):
        reservoir.scale([({"world": True}, TINY)], to={"world": 2})
    with pytest.raises(ValueError, match="no parameters given and no capture sidecar"):
        reservoir.scale([reservoir.load(TINY.read_bytes())], to={"world": 2})


def test_help_of_the_package_runs_without_torch():
    code = "import sys, reservoir, reservoir.pytest_plugin; help(reservoir); assert 'torch' not in sys.modules"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


USES = '''
import reservoir

t = reservoir.load("x.pickle", device="cuda:0")
peak: int = t.whatif(cleanup=["after:x.py:f"])["whatif"]["peak_reserved"]
for c in reservoir.sweep([t], top=3)["candidates"]:
    t.whatif(**c["kwargs"])
ok: bool = reservoir.gate(t, "40GiB")["pass"]
reservoir.__version__.upper()
'''


def test_type_checkers_see_the_api_and_its_stubs(tmp_path):
    pytest.importorskip("mypy", reason="mypy (apt install python3-mypy) checks the stubs")
    package = SOURCE / "python"
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(USES)
    bad.write_text(USES + 't.whatif(capacity=3.5)\nreservoir.load("x", nmae="y")\n')
    run = lambda *files: subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--cache-dir",
                                         str(tmp_path / "cache"), *map(str, files)],
                                        capture_output=True, text=True, env={**os.environ, "MYPYPATH": str(package)},
                                        cwd=package)
    p = run(good, "reservoir")
    assert p.returncode == 0, p.stdout + p.stderr
    p = run(bad)
    assert p.returncode == 1 and 'Argument "capacity"' in p.stdout and '"nmae"' in p.stdout, p.stdout
