"""Errors through the Python API: unreadable or invalid input raises reservoir.TraceError that says
what is wrong in plain words first (its .headline), then names the file (.path), the byte offset
(.offset) and what was expected (tests/data/bad, the reader's own corpus); a point that matches
nothing or a bad option raises ValueError."""

import errno
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


def test_a_missing_file_is_a_trace_error_and_a_file_not_found_error():
    with pytest.raises(reservoir.TraceError, match="^cannot read the file: No such file or directory "
                                                   r"\(file /no/such/file.pickle: ") as e:
        reservoir.load("/no/such/file.pickle")
    assert e.value.path == "/no/such/file.pickle" and e.value.offset is None
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, reservoir.TraceFileNotFoundError)
    assert e.value.errno == errno.ENOENT and e.value.filename == "/no/such/file.pickle"
    with pytest.raises(FileNotFoundError):
        reservoir.whatif("/no/such/file.pickle")
    # A file that exists but cannot be read is no FileNotFoundError.
    with pytest.raises(reservoir.TraceError) as bad:
        reservoir.load(BAD / CASES[0]["file"])
    assert not isinstance(bad.value, FileNotFoundError)


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
    (dict(address_model="exact"), "address_model: 'exact'"),
    (dict(reset_peaks=["sometime"]), "reset_peaks: "),
    (dict(capacity="80G"), "capacity: '80G' is ambiguous: write 80GiB (80 x 2^30 bytes) or 80GB (80 x 10^9 bytes)"),
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


def test_edits_are_keyword_only():
    with pytest.raises(TypeError):
        reservoir.load(TINY).whatif([LOAD_POINT])
    with pytest.raises(TypeError):
        reservoir.whatif(TINY, [LOAD_POINT])


DEVICES_OK = [(None, 0), (0, 0), ("cuda:0", 0), ("cuda", 0)]


@pytest.mark.parametrize("device, index", DEVICES_OK)
def test_devices_as_torch_names_them(device, index):
    assert reservoir.load(TINY, device=device).device == index


class FakeTorchDevice:  # what torch.device looks like to the package (duck-typed: .type and .index)
    def __init__(self, type, index):
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type={self.type!r}, index={self.index})"


def test_a_torch_device_and_cuda_n_pick_that_device():
    assert reservoir.load(TINY, device=FakeTorchDevice("cuda", 0)).device == 0
    assert reservoir.load(TINY, device=FakeTorchDevice("cuda", None)).device == 0
    # The snapshot lists device 1 too (no events): "cuda:1" is device 1, not the default (0).
    assert reservoir.load(TINY, device="cuda:1").device == 1
    assert reservoir.load(TINY, device=FakeTorchDevice("cuda", 1)).device == 1
    with pytest.raises(ValueError, match="no device 7"):
        reservoir.load(TINY, device="cuda:7")


@pytest.mark.parametrize("device, error", [
    (True, TypeError), (1.0, TypeError), (b"0", TypeError), ([0], TypeError),
    ("0", ValueError), ("gpu", ValueError), ("cuda:x", ValueError), ("cuda:-1", ValueError), (-1, ValueError),
    ("cpu", ValueError), (FakeTorchDevice("cpu", None), ValueError),
])
def test_a_wrong_device_names_the_keyword_briefly_and_never_echoes_the_snapshot(device, error):
    data = TINY.read_bytes()
    for call in (lambda: reservoir.load(data, device=device), lambda: reservoir.load(TINY, device),
                 lambda: reservoir.whatif(TINY, device=device)):
        with pytest.raises(error) as e:
            call()
        message = str(e.value)
        assert message.startswith("device=: ") and len(message) < 500, message


@pytest.mark.parametrize("kwargs", [dict(name=123), dict(name=b"x"), dict(capture=5), dict(capture_json="no")])
def test_wrong_load_keywords_are_short_type_errors(kwargs):
    with pytest.raises(TypeError) as e:
        reservoir.load(TINY.read_bytes(), **kwargs)
    assert len(str(e.value)) < 500 and str(e.value).startswith(next(iter(kwargs)) + "=: "), str(e.value)


def test_a_path_with_a_nul_byte_is_refused():
    with pytest.raises(ValueError, match="NUL byte"):
        reservoir.load(str(TINY) + "\0.zst")


def test_the_library_rejects_what_it_cannot_read_in_a_dict():
    # A dict that is not a snapshot: pickled here, refused by the reader with what it expected.
    with pytest.raises(reservoir.TraceError, match="<snapshot>"):
        reservoir.load({"not": "a snapshot"})
    with pytest.raises(reservoir.TraceError):
        reservoir.load({"segments": [], "device_traces": [[{"action": "alloc", "addr": "x"}]]})


NO_HISTORY = SOURCE / "tests" / "data" / "no-history"


@pytest.mark.parametrize("name", ["state-only.pickle", "no-traces.pickle"])
def test_no_history_raises_nothing_to_replay_from_every_replay(name):
    # It loads and info() works; every replay raises the one exception, a TraceError, with the
    # library's sentence (naming the file, and Python's way to see the segments).
    path = NO_HISTORY / name
    t = reservoir.load(path)
    assert t.info()["segments"] == 1 and not t.has_history
    calls = [t.check, lambda: t.whatif(set="expandable_segments:True"), t.sweep,
             lambda: t.gate(max_peak_reserved="1GiB"), lambda: t.export(csv="/dev/null"),
             lambda: reservoir.check([TINY, path]), lambda: reservoir.whatif([TINY, path]),
             lambda: reservoir.sweep(path), lambda: reservoir.gate([path, TINY], capacity="80GiB")]
    for call in calls:
        with pytest.raises(reservoir.NothingToReplay) as e:
            call()
        assert isinstance(e.value, reservoir.TraceError) and e.value.path == str(path)
        assert str(e.value).startswith(f"{path}: ") and "nothing to replay" in str(e.value)
        assert "trace.info()" in str(e.value) and "reservoir info" not in str(e.value)
