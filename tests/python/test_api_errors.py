"""Errors through the Python API: unreadable or invalid input raises reservoir.TraceError that says
what is wrong in plain words first (its .headline), then names the file (.path), the byte offset
(.offset) and what was expected (tests/data/bad, the reader's own corpus); a point that matches
nothing or a bad option raises ValueError."""

import json

import pytest

import reservoir
from api_support import LOAD_POINT, SOURCE, TINY

BAD = SOURCE / "tests" / "data" / "bad"
CASES = [c for c in json.loads((BAD / "expected.json").read_text()) if "limits" not in c]


def assert_explained(error, name, case):
    message = str(error)
    start = f"{case['headline']} (file {name}"
    assert message.startswith(start), message
    assert error.headline == case["headline"]
    assert error.path == name
    if case["offset"] is not None:
        assert message.startswith(f"{start}, byte {case['offset']}"), message
        assert error.offset == case["offset"]
    for reason in case["reasons"]:
        assert reason in message, message


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_a_bad_file_raises_trace_error_with_offset_and_reason(case):
    path = str(BAD / case["file"])
    with pytest.raises(reservoir.TraceError) as e:
        reservoir.load(path)
    assert_explained(e.value, path, case)


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_bad_bytes_raise_the_same_way(case):
    name = "in-memory " + case["file"]
    with pytest.raises(reservoir.TraceError) as e:
        reservoir.load((BAD / case["file"]).read_bytes(), name=name)
    assert_explained(e.value, name, case)


def test_a_truncated_snapshot_names_the_offset(tmp_path):
    data = TINY.read_bytes()
    cut = tmp_path / "cut.pickle"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(reservoir.TraceError, match=r"^the file ends early: was the dump interrupted\? "
                                                   r"\(file .*cut\.pickle, byte \d+ of \d+: ") as e:
        reservoir.load(cut)
    assert 0 < e.value.offset < len(data) // 2


def test_a_missing_file_is_a_trace_error():
    with pytest.raises(reservoir.TraceError, match="^cannot read the file: No such file or directory "
                                                   r"\(file /no/such/file.pickle: ") as e:
        reservoir.load("/no/such/file.pickle")
    assert e.value.path == "/no/such/file.pickle" and e.value.offset is None


def test_trace_error_is_not_a_value_error():
    assert not issubclass(reservoir.TraceError, ValueError)


def test_a_point_matching_nothing_is_a_value_error_naming_close_frames():
    t = reservoir.load(TINY)
    with pytest.raises(ValueError) as e:
        t.whatif(cleanup=["after:state_dict_loadr.py:lod"])
    message = str(e.value)
    assert "state_dict_loadr.py" in message and str(TINY) in message
    assert "closest frames:" in message and "load" in message.split("closest frames:")[1]
    assert not isinstance(e.value, reservoir.TraceError)


@pytest.mark.parametrize("kwargs, words", [
    (dict(capacity="lots"), "capacity: not a size: 'lots'"),
    (dict(overhead="x"), "overhead: not a size"),
    (dict(set="no_such_setting:1"), "set 'no_such_setting:1'"),
    (dict(fraction=1.5), "fraction: 1.5 is not in [0, 1]"),
    (dict(demand=["40GiB"]), "demand: '40GiB': expected BYTES@POINT"),
    (dict(release=["x.py:f"]), "release: 'x.py:f': expected SELECTOR@POINT"),
    (dict(probe=["sometime"]), "probe:"),
    (dict(address_model="exact"), "address-model: 'exact'"),
])
def test_bad_options_are_value_errors_naming_the_option(kwargs, words):
    with pytest.raises(ValueError) as e:
        reservoir.load(TINY).whatif(**kwargs)
    assert words in str(e.value)


def test_a_device_the_snapshot_lacks_is_a_value_error():
    with pytest.raises(ValueError, match="no device 7"):
        reservoir.load(TINY, device=7)


def test_wrong_types_are_type_errors():
    with pytest.raises(TypeError):
        reservoir.load(42)
    with pytest.raises(TypeError):
        reservoir.load(TINY).whatif(capacity=1.5)


def test_the_library_rejects_what_it_cannot_read_in_a_dict():
    # A dict that is not a snapshot: pickled here, refused by the reader with what it expected.
    with pytest.raises(reservoir.TraceError, match="<snapshot>"):
        reservoir.load({"not": "a snapshot"})
    with pytest.raises(reservoir.TraceError):
        reservoir.load({"segments": [], "device_traces": [[{"action": "alloc", "addr": "x"}]]})


NO_HISTORY = SOURCE / "tests" / "data" / "no-history"


@pytest.mark.parametrize("name", ["state-only.pickle", "no-traces.pickle"])
def test_no_history_check_and_whatif_answer_as_the_command_line(name):
    # As `reservoir check/whatif --json`: the library's nothing-to-replay sentence, not a TraceError.
    path = NO_HISTORY / name
    t = reservoir.load(path)
    assert t.info()["segments"] == 1
    edits = dict(set="expandable_segments:True")
    for r in (t.check(), t.whatif(**edits), reservoir.whatif(path, **edits)):
        assert r["trace"] == str(path), r
        assert r["nothing_to_replay"].startswith(f"{path}: "), r
        assert "nothing to replay" in r["nothing_to_replay"], r
    with pytest.raises(reservoir.TraceError, match="nothing to replay"):
        t.sweep()


def test_whatif_over_traces_leaves_out_those_without_history():
    both = reservoir.whatif([TINY, NO_HISTORY / "state-only.pickle"], set="expandable_segments:True")
    assert "nothing_to_replay" not in both and "baseline" in both, both.keys()
    none = reservoir.whatif([NO_HISTORY / "state-only.pickle", NO_HISTORY / "no-traces.pickle"],
                            set="expandable_segments:True")
    assert [t["trace"] for t in none["traces"]] == [str(NO_HISTORY / "state-only.pickle"),
                                                  str(NO_HISTORY / "no-traces.pickle")]
