#!/usr/bin/env python3
"""Writes the corpus of malformed / hostile inputs for tests/traces/bad_input_test.cpp.

Each case is a file in this folder and an entry of expected.json:
  {"file": ..., "offset": N or null, "headline": plain words, "reasons": [substrings],
   "limits": {ReadLimits field: value}}
The reader must fail on the file (never crash), with a message that starts with the headline
(the class of problem in plain words, HEADLINES below), then "(file PATH, byte N" when N is
given, and holds every reason substring. Offsets are computed here from how each file is
built (with pickletools where Python wrote the pickle), not from our reader.

Run it from anywhere: python3 tests/data/bad/make_bad_inputs.py
"""
import gzip
import json
import os
import pickle
import pickletools
import struct
import subprocess
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
P4 = b"\x80\x04"
CASES = []


# The plain words a message starts with, one per class of problem (traces/src/read_problem.cpp,
# docs/reader.md); a class's site adds what it knows after a colon.
NOT_SNAPSHOT = "not a PyTorch memory snapshot"
EMPTY = "the file is empty: was the dump interrupted before it wrote anything?"
TRUNCATED_FILE = "the file ends early: was the dump interrupted?"
WRONG_TYPE = NOT_SNAPSHOT + ": the file is not a pickle"
ZIP = NOT_SNAPSHOT + ": the file is a zip archive (what torch.save writes; a memory snapshot is a plain pickle)"
SOMETHING_ELSE = NOT_SNAPSHOT + ": a pickle of something else"
DAMAGED = "the snapshot is damaged"
COMPRESSED_DAMAGED = "the compressed file is damaged"
TOO_LARGE = "too large to read: the file asks for more memory than a real snapshot needs (hostile or damaged?)"


def text_file(data):
    """The headline of a file that starts with text: its first 40 characters, newlines as \\n."""
    head = data[:64].decode("latin-1")
    shown = "".join("\\n" if c == "\n" else '\\"' if c == '"' else c if " " <= c < "\x7f" else "?"
                    for c in head[:40])
    return NOT_SNAPSHOT + ': the file starts with text ("' + shown + ("..." if len(head) > 40 else "") + '")'


def protocol(n):
    return NOT_SNAPSHOT + f": a pickle of protocol {n}, which torch does not write (snapshots use 2-5)"


def code(callee=None):
    if callee is None:
        return "this pickle would run code; a memory snapshot never does: refused"
    return f"this pickle would run code ({callee}); a memory snapshot never does: refused"


def compressed(what):
    return COMPRESSED_DAMAGED + ": " + what


def headline_of(name, data):
    """The class each file belongs to, decided here from how it is built."""
    if name in HEADLINE:
        return HEADLINE[name]
    if name.startswith("truncated"):
        return TRUNCATED_FILE
    if name in ("protocol0_text.pickle", "os_system_protocol0.pickle"):
        return text_file(data)
    if name in ("gzip_of_garbage.pickle.gz",):
        return text_file(b"hello, world")
    return DAMAGED


HEADLINE = {
    "empty.pickle": EMPTY,
    "one_byte.pickle": TRUNCATED_FILE,
    "zip_magic.pickle": ZIP,
    "protocol1.pickle": protocol(1),
    "protocol6.pickle": protocol(6),
    "proto_again_6.pickle": protocol(6),
    "no_stop.pickle": TRUNCATED_FILE,
    "binunicode8_2pow60.pickle": TOO_LARGE,
    "binunicode_4gib.pickle": TOO_LARGE,
    "binunicode_more_than_file.pickle": TRUNCATED_FILE,
    "binbytes8_2pow60.pickle": TOO_LARGE,
    "long4_2pow31m1.pickle": TOO_LARGE,
    "long4_2pow27.pickle": TRUNCATED_FILE,
    "deep_marks_limited.pickle": TOO_LARGE,
    "none_flood.pickle": TOO_LARGE,
    "list_items_limited.pickle": TOO_LARGE,
    "string_limited.pickle": TOO_LARGE,
    "long_binput_far.pickle": TOO_LARGE,
    "long_binput_over_limit.pickle": TOO_LARGE,
    "memo_flood.pickle.zst": TOO_LARGE,
    "os_system_protocol2.pickle": code("posix.system" if os.name == "posix" else "nt.system"),
    "os_system_protocol4.pickle": code("posix.system" if os.name == "posix" else "nt.system"),
    "inst.pickle": code("os.system"),
    "global_inside_snapshot.pickle": code("collections.OrderedDict"),
    "reduce.pickle": code(),
    "build.pickle": code(),
    "obj.pickle": code(),
    "newobj.pickle": code(),
    "binpersid.pickle": code(),
    "ext1.pickle": code(),
    "next_buffer.pickle": NOT_SNAPSHOT + ": a pickle with out-of-band buffers, which a snapshot never has",
    "a_list.pickle": SOMETHING_ELSE + " (its object is list)",
    "an_int.pickle": SOMETHING_ELSE + " (its object is int)",
    "a_string.pickle": SOMETHING_ELSE + " (its object is str)",
    "dict_without_device_traces.pickle": NOT_SNAPSHOT + ": a pickle of a dict without 'segments' and 'device_traces'",
    "dict_without_segments.pickle": NOT_SNAPSHOT + ": a pickle of a dict without 'segments' and 'device_traces'",
    "segment_list.pickle":
        NOT_SNAPSHOT + ": a list of segments without the trace (torch.cuda.memory_snapshot(), not _snapshot())",
    "device_traces_of_ints.pickle": SOMETHING_ELSE,
    "device_traces_dict.pickle": SOMETHING_ELSE,
    "segments_dict.pickle": SOMETHING_ELSE,
    "trace_of_strings.pickle": SOMETHING_ELSE,
    "corrupt.pickle.gz": compressed("the gzip data does not decode"),
    "corrupt.pickle.zst": compressed("the zstd data does not decode"),
    "gzip_trailer_cut_1.pickle.gz": TRUNCATED_FILE,
    "gzip_trailer_cut_8.pickle.gz": TRUNCATED_FILE,
    "gzip_crc_flipped.pickle.gz":
        compressed("its gzip CRC32 does not match the data (changed or damaged after it was written)"),
    "gzip_stored_byte_flipped.pickle.gz":
        compressed("its gzip CRC32 does not match the data (changed or damaged after it was written)"),
    "gzip_length_flipped.pickle.gz": compressed("its gzip trailer gives another length than the data has"),
    "zstd_checksum_flipped.pickle.zst":
        compressed("its zstd checksum does not match the data (changed or damaged after it was written)"),
    "none_lists_unknown_key.pickle.zst": TRUNCATED_FILE,
}


def case(name, data, offset, *reasons, limits=None):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    entry = {"file": name, "offset": offset, "headline": headline_of(name, data), "reasons": list(reasons)}
    if limits:
        entry["limits"] = limits
    CASES.append(entry)


def op_positions(data, name):
    return [pos for op, _, pos in pickletools.genops(data) if op.name == name]


def first_op(data, *names):
    return min(pos for op, _, pos in pickletools.genops(data) if op.name in names)


def stop_offset(data):
    return op_positions(data, "STOP")[0]


def event(**fields):
    e = {"action": "alloc", "addr": 140472081186816, "size": 512, "stream": 0, "time_us": 1796028433553603}
    e.update(fields)
    return e


def snapshot(traces=None, segments=None, **extra):
    s = {"segments": segments or [], "device_traces": traces if traces is not None else [[]]}
    s.update(extra)
    return s


def segment(**fields):
    s = {"device": 0, "address": 2097152, "total_size": 2097152, "allocated_size": 0, "active_size": 0,
         "requested_size": 0, "stream": 0, "segment_type": "large", "segment_pool_id": (0, 0),
         "is_expandable": False, "frames": [], "blocks": []}
    s.update(fields)
    return s


def framing_and_headers():
    case("empty.pickle", b"", 0, "empty input")
    case("one_byte.pickle", b"\x80", 0, "too short")
    case("zip_magic.pickle", b"PK\x03\x04" + b"\x00" * 60, 0, "first byte 0x50", "expected a pickle's PROTO")
    case("protocol0_text.pickle", pickle.dumps({"segments": []}, protocol=0), 0, "first byte 0x28")
    case("protocol1.pickle", b"\x80\x01}q\x00.", 0, "unsupported pickle protocol 1")
    case("protocol6.pickle", b"\x80\x06}\x94.", 0, "unsupported pickle protocol 6")
    case("proto_again_6.pickle", P4 + b"}\x80\x06.", 3, "unsupported pickle protocol 6")
    case("no_stop.pickle", P4 + b"}", 3, "unexpected end of data before STOP")
    case("stop_on_empty_stack.pickle", P4 + b".", 2, "STOP with an empty stack")


# Opcode, argument bytes that are cut short.
TRUNCATED = [
    ("BINUNICODE", b"X\x10\x00\x00\x00abc"),
    ("BINUNICODE_length", b"X\x10\x00"),
    ("SHORT_BINUNICODE", b"\x8c\x05ab"),
    ("BINUNICODE8", b"\x8d\x05\x00\x00\x00\x00\x00\x00\x00ab"),
    ("SHORT_BINBYTES", b"C\x09abc"),
    ("BINBYTES", b"B\x09\x00\x00\x00abc"),
    ("LONG1", b"\x8a\x08\x01\x02"),
    ("LONG4", b"\x8b\x10\x00\x00\x00\x01"),
    ("BININT", b"J\x01\x02"),
    ("BININT2", b"M\x01"),
    ("BININT1", b"K"),
    ("BINFLOAT", b"G\x3f\xf0"),
    ("FRAME", b"\x95\x10\x00"),
    ("BINGET", b"h"),
    ("LONG_BINGET", b"j\x01\x00"),
    ("BINPUT", b"}q"),
    ("LONG_BINPUT", b"}r\x01"),
    ("PROTO", b"\x80"),
]


def truncated_opcodes():
    for name, body in TRUNCATED:
        op_name = name.split("_length")[0]
        start = 2 + (1 if body[:1] == b"}" else 0)
        case(f"truncated_{name.lower()}.pickle", P4 + body, start, f"truncated {op_name} ")
    # A real snapshot cut inside a SHORT_BINUNICODE.
    data = pickle.dumps(snapshot([[event(), event(action="free_requested")]]), protocol=4)
    pos = op_positions(data, "SHORT_BINUNICODE")[5]
    case("truncated_snapshot.pickle", data[: pos + 4], pos, "truncated SHORT_BINUNICODE")


def huge_lengths():
    case("binunicode8_2pow60.pickle", P4 + b"\x8d" + struct.pack("<Q", 1 << 60) + b"abc", 2,
         "BINUNICODE8 declares 1152921504606846976 bytes", "over the limit")
    case("binunicode_4gib.pickle", P4 + b"X\xff\xff\xff\xff" + b"abc", 2, "BINUNICODE declares 4294967295 bytes")
    case("binunicode_more_than_file.pickle", P4 + b"X" + struct.pack("<I", 10_000_000) + b"abc" * 10, 2,
         "more than the input can hold")
    case("binbytes8_2pow60.pickle", P4 + b"\x8e" + struct.pack("<Q", 1 << 60), 2, "BINBYTES8 declares")
    # Over max_string_bytes (2^28 since issue 16); a LONG4 under it that the file cannot back is "truncated".
    case("long4_2pow31m1.pickle", P4 + b"\x8b" + struct.pack("<I", 2**31 - 1) + b"\x01" * 16, 2,
         "LONG4 declares 2147483647 bytes")
    case("long4_2pow27.pickle", P4 + b"\x8b" + struct.pack("<I", 2**27) + b"\x01" * 16, 2, "truncated LONG4")
    case("long4_negative.pickle", P4 + b"\x8b\xff\xff\xff\xff" + b"\x01" * 16, 2, "LONG4 with a negative length")
    case("binstring_negative.pickle", b"\x80\x02T\xff\xff\xff\xff" + b"a" * 16, 2, "BINSTRING with a negative length")


def nesting_and_limits():
    marks = P4 + b"(" * 1_000_000 + b"."
    case("deep_marks.pickle.gz", gzip.compress(marks, mtime=0), 1_000_002, "STOP with an empty stack",
         "decompressed stream")
    case("deep_marks_limited.pickle", P4 + b"(" * 5000 + b".", 2 + 1000, "MARKs nested too deeply",
         limits={"max_marks": 1000})
    # The 1001st value on the stack is over a limit of 1000.
    case("none_flood.pickle", P4 + b"N" * 5000 + b".", 2 + 1000, "pickle stack exceeds 1000 values",
         limits={"max_stack_values": 1000})
    items = P4 + b"](" + b"N" * 50 + b"e."
    case("list_items_limited.pickle", items, 2 + 1 + 1 + 50, "list exceeds the item limit",
         limits={"max_container_items": 10})
    case("string_limited.pickle", P4 + b"X\x00\x01\x00\x00" + b"a" * 256 + b".", 2, "over the limit of 100",
         limits={"max_string_bytes": 100})


def memo_cases():
    case("binget_undefined.pickle", P4 + b"h\x05.", 2, "memo reference 5 is not defined")
    case("long_binget_undefined.pickle", P4 + b"N\x94j\xff\xff\xff\xff.", 4, "memo reference 4294967295 is not defined")
    case("long_binput_far.pickle", P4 + b"Nr\x00\x00\x00\x01.", 3, "memo index 16777216 far beyond the memo")
    case("long_binput_over_limit.pickle", P4 + b"Nr\x00\x00\x00\x10.", 3, "memo index 268435456 over the limit")
    case("memoize_empty_stack.pickle", P4 + b"\x94.", 2, "memo store with an empty stack")
    # The same trace-entry dict listed twice (a memo reference): a snapshot never shares one.
    # Padding after it keeps the reader on its fast path, where this once dereferenced null.
    # The entry is converted as soon as it is complete, so the reference to it is refused.
    ev = event()
    data = pickle.dumps(snapshot([[ev, ev]], padding="x" * 100), protocol=4)
    appends = op_positions(data, "APPENDS")[0]
    ref = max(pos for op, _, pos in pickletools.genops(data) if op.name in ("BINGET", "LONG_BINGET") and pos < appends)
    case("shared_event_dict.pickle", data, ref, "points to a trace entry, segment or annotation that is shared")


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def code_payloads():
    case("os_system_protocol0.pickle", b"cos\nsystem\n(S'echo pwned'\ntR.", 0, "first byte 0x63")
    data = pickle.dumps(Evil(), protocol=2)
    case("os_system_protocol2.pickle", data, first_op(data, "GLOBAL"), "refusing opcode GLOBAL", "never does")
    data = pickle.dumps(Evil(), protocol=4)
    case("os_system_protocol4.pickle", data, first_op(data, "STACK_GLOBAL"), "refusing opcode STACK_GLOBAL")
    case("reduce.pickle", P4 + b"N)R.", 4, "refusing opcode REDUCE")
    case("build.pickle", P4 + b"}Nb.", 4, "refusing opcode BUILD")
    case("inst.pickle", b"\x80\x02(ios\nsystem\n.", 3, "refusing opcode INST")
    case("obj.pickle", P4 + b"(No.", 4, "refusing opcode OBJ")
    case("newobj.pickle", P4 + b"N)\x81.", 4, "refusing opcode NEWOBJ")
    case("binpersid.pickle", P4 + b"N" + b"Q.", 3, "refusing opcode BINPERSID")
    case("ext1.pickle", P4 + b"\x82\x01.", 2, "refusing opcode EXT1")
    case("next_buffer.pickle", b"\x80\x05\x97.", 2, "NEXT_BUFFER", "out-of-band")
    import collections
    data = pickle.dumps(snapshot(extra=collections.OrderedDict()), protocol=4)
    case("global_inside_snapshot.pickle", data, first_op(data, "STACK_GLOBAL"), "refusing opcode STACK_GLOBAL")


def not_snapshots():
    for name, obj, reason in [
        ("a_list.pickle", [1, 2, 3], "the pickled object is list"),
        ("an_int.pickle", 42, "the pickled object is int"),
        ("a_string.pickle", "segments", "the pickled object is str"),
        ("dict_without_device_traces.pickle", {"segments": []}, "no 'segments' / 'device_traces' key"),
        ("dict_without_segments.pickle", {"device_traces": [[]]}, "no 'segments' / 'device_traces' key"),
        ("segment_list.pickle", [segment(), segment(address=4194304)], "torch.cuda.memory_snapshot()"),
        ("device_traces_of_ints.pickle", snapshot([1]), "device_traces[0] is int, expected a list"),
        ("device_traces_dict.pickle", snapshot({}), "'device_traces' is dict, expected a list"),
        ("segments_dict.pickle", {"segments": {}, "device_traces": []}, "'segments' is dict, expected a list"),
        ("trace_of_strings.pickle", snapshot([["alloc"]]), "not trace entries"),
        ("settings_list.pickle", snapshot(allocator_settings=[]), "'allocator_settings' is list"),
    ]:
        data = pickle.dumps(obj, protocol=4)
        case(name, data, stop_offset(data), reason)


def wrong_field_types():
    # Each dict is rejected when it is inserted into its list: the first APPEND(S) of the file
    # unless the entry says which.
    for name, obj, reason, *nth in [
        ("event_addr_str.pickle", snapshot([[event(addr="0x10")]]), "trace entry field 'addr' is str, expected int"),
        ("event_size_float.pickle", snapshot([[event(size=1.5)]]), "field 'size' is float, expected int"),
        ("event_size_none.pickle", snapshot([[event(size=None)]]), "field 'size' is None, expected int"),
        ("event_action_int.pickle", snapshot([[event(action=3)]]), "field 'action' is int, expected str"),
        ("event_frames_str.pickle", snapshot([[event(frames="abc")]]), "'frames' is str, expected a list of frame"),
        # (its frames list's own APPENDS comes first: the entry's APPEND is the second)
        ("event_frames_ints.pickle", snapshot([[event(frames=[1, 2])]]),
         "'frames' is a list of 2 item(s), 2 of them not a frame dict (a frame has 'filename', 'line' and 'name'), "
         "expected a list of frame", 1),
        # frames=[{}]: a list, but its item is no frame ("'frames' is list" named no fault)
        ("event_frames_empty_dict.pickle", snapshot([[event(frames=[{}])]]),
         "'frames' is a list of 1 item(s), 1 of them not a frame dict", 1),
        ("event_time_bool.pickle", snapshot([[event(time_us=True)]]), "field 'time_us' is bool, expected int"),
        ("frame_line_str.pickle", snapshot([[event(frames=[{"name": "f", "filename": "a.py", "line": "x"}])]]),
         "frame field 'line' is str, expected int"),
        ("segment_address_str.pickle", snapshot(segments=[segment(address="x")]),
         "segment field 'address' is str, expected int"),
        ("segment_pool_id_int.pickle", snapshot(segments=[segment(segment_pool_id=5)]),
         "'segment_pool_id' is int, expected a tuple of two ints"),
        ("segment_expandable_int.pickle", snapshot(segments=[segment(is_expandable=1)]),
         "'is_expandable' is int, expected bool"),
        ("segment_blocks_str.pickle", snapshot(segments=[segment(blocks="none")]), "'blocks' is str, expected list"),
    ]:
        data = pickle.dumps(obj, protocol=4)
        appends = sorted(op_positions(data, "APPEND") + op_positions(data, "APPENDS"))
        case(name, data, appends[nth[0] if nth else 0], reason)
    bad_block = {"address": 2097152, "size": 512, "requested_size": 512, "state": 7, "frames": []}
    data = pickle.dumps(snapshot(segments=[segment(blocks=[bad_block])]), protocol=4)
    # The block list is complete before its segment is converted: the segment's APPEND fails.
    case("block_state_int.pickle", data, op_positions(data, "APPEND")[1], "block field 'state' is int, expected str")


def structure_errors():
    case("setitems_no_mark.pickle", P4 + b"}Nu.", 4, "no MARK before this opcode")
    case("setitems_odd.pickle", P4 + b"}(Nu.", 5, "SETITEMS with an odd number of items")
    case("append_to_int.pickle", P4 + b"KxNa.", 5, "APPEND target is not a list")
    case("setitem_to_list.pickle", P4 + b"]NNs.", 5, "SETITEM target is not a dict")
    case("pop_empty.pickle", P4 + b"0.", 2, "POP from an empty stack")
    case("tuple2_short.pickle", P4 + b"N\x86.", 3, "TUPLE2 needs 2 values")
    case("unknown_opcode.pickle", P4 + b"\xff.", 2, "unknown opcode 0xff")
    case("text_opcode.pickle", P4 + b"I42\n.", 2, "protocol-0 text opcode INT")


def offset_of_end(data, n):
    """Where the reader stops when only data[:n] arrives: the opcode that n falls in, or n."""
    return max(pos for _, _, pos in pickletools.genops(data) if pos <= n)


def compression():
    # Distinct entries (growing addresses) so the stream does not compress to nothing.
    good = pickle.dumps(snapshot([[event(addr=4096 * i, time_us=i * 7919) for i in range(3000)]]), protocol=4)
    gz = gzip.compress(good, mtime=0)
    cut = gz[: len(gz) // 2]
    got = zlib.decompressobj(31).decompress(cut)  # what a decoder can hand out before the cut
    assert 0 < len(got) < len(good)
    case("truncated.pickle.gz", cut, offset_of_end(good, len(got)), "gzip: compressed data ends early",
         "decompressed stream")
    case("corrupt.pickle.gz", gz[:10] + bytes(b ^ 0x5A for b in gz[10:40]) + gz[40:], 0, "gzip: corrupt data")
    case("corrupt.pickle.zst", b"\x28\xb5\x2f\xfd" + b"\xde\xad\xbe\xef" * 8, 0, "zstd: corrupt data")
    zst = subprocess.run(["zstd", "-q", "-c", "-3", "--no-check"], input=good, capture_output=True, check=True).stdout
    case("truncated.pickle.zst", zst[: len(zst) // 2], None, "zstd: compressed data ends early",
         "decompressed stream")
    case("gzip_of_garbage.pickle.gz", gzip.compress(b"hello, world", mtime=0), 0, "first byte 0x68",
         "decompressed stream")


def flipped(data, pos):
    return data[:pos] + bytes([data[pos] ^ 0x01]) + data[pos + 1:]


def compressed_trailers():
    # The reader reads a compressed input to its end, so its trailer is checked: the error comes
    # at the end of the decompressed stream (len(good)), after the pickle itself parsed.
    good = pickle.dumps(snapshot([[event(addr=4096 * i, time_us=i * 7919) for i in range(300)]], padding="x" * 200),
                        protocol=4)
    gz = gzip.compress(good, mtime=0)
    case("gzip_trailer_cut_1.pickle.gz", gz[:-1], len(good), "gzip: compressed data ends early")
    case("gzip_trailer_cut_8.pickle.gz", gz[:-8], len(good), "gzip: compressed data ends early")
    case("gzip_crc_flipped.pickle.gz", flipped(gz, len(gz) - 8), len(good), "CRC32 in the trailer does not match")
    case("gzip_length_flipped.pickle.gz", flipped(gz, len(gz) - 1), len(good), "length in the trailer does not match")
    # Stored (level 0) blocks have no check of their own: a flipped byte of the padding string
    # still parses, and only the CRC32 tells.
    z = zlib.compressobj(0, zlib.DEFLATED, 31)
    stored = z.compress(good) + z.flush()
    case("gzip_stored_byte_flipped.pickle.gz", flipped(stored, stored.index(b"x" * 50) + 10), len(good),
         "CRC32 in the trailer does not match")
    zst = subprocess.run(["zstd", "-q", "-c", "-3", "--check"], input=good, capture_output=True, check=True).stdout
    case("zstd_checksum_flipped.pickle.zst", flipped(zst, len(zst) - 1), len(good), "zstd: corrupt data",
         "checksum does not match")


def out_of_range_values():
    # Sizes and addresses outside [0, 2^62): refused after the read, naming the entry.
    for name, obj, reasons in [
        ("event_size_2pow63.pickle", snapshot([[event(size=2**63)]]),
         ["device_traces[0] entry 0 ('alloc')", "'size' is 9223372036854775808 (or", "outside [0, 2^62)"]),
        ("event_size_negative.pickle", snapshot([[event(), event(action="free_requested", size=-14680064)]]),
         ["device_traces[0] entry 1 ('free_requested')", "'size' is 18446744073694871552 (or -14680064 as a signed"]),
        ("event_addr_2pow62.pickle", snapshot([[event(addr=2**62)]]), ["entry 0", "'addr' is 4611686018427387904"]),
        ("segment_total_size_negative.pickle", snapshot(segments=[segment(total_size=-2097152)]),
         ["segments[0]: 'total_size' is", "-2097152 as a signed number"]),
        ("block_size_2pow63.pickle",
         snapshot(segments=[segment(blocks=[{"address": 2097152, "size": 2**63, "requested_size": 512,
                                             "state": "active_allocated", "frames": []}])]),
         ["segments[0]['blocks'][0]: 'size' is 9223372036854775808"]),
        ("devices_1025.pickle", snapshot([[] for _ in range(1025)]),
         ["'device_traces' lists 1025 devices, more than the 1024"]),
        ("segment_device_negative.pickle", snapshot(segments=[segment(device=-1)]),
         ["segments[0]: 'device' is -1, not a CUDA device number (0 to 1023)"]),
    ]:
        case(name, pickle.dumps(obj, protocol=4), None, *reasons)


def memory_and_sharing():
    # An int of 2^64 or more in a size field: said in plain words, not "is int, expected int".
    case("event_size_2pow64.pickle", pickle.dumps(snapshot([[event(size=2**64)]]), protocol=4), None,
         "trace entry field 'size' is an integer outside the 64-bit range")
    # Two device traces that are one list object (a memo reference): refused, not read as empty.
    shared = [event(), event(action="free_requested"), event(action="free_completed")]
    data = pickle.dumps(snapshot([shared, shared]), protocol=4)
    case("device_traces_shared_list.pickle", data, None,
         "device_traces[1] is the same list object as device_traces[0]")
    # A memo flood (None, then MEMOIZE 2^22 times) under an unknown key: the memo grows 16 bytes
    # per input byte; the total budget stops it (a 16 MiB floor here keeps the test small; the
    # default floor is 512 MiB). The budget is checked after each MiB of pickle.
    head = P4 + b"}(\x8c\x08segments]\x8c\x0ddevice_traces]]a\x8c\x04junkN"
    flood = head + b"\x94" * (1 << 22) + b"u."
    zst = subprocess.run(["zstd", "-q", "-c", "-19"], input=flood, capture_output=True, check=True).stdout
    case("memo_flood.pickle.zst", zst, None, "the reader needs", "over its budget of", "decompressed stream",
         limits={"memory_floor_bytes": 16 << 20})
    # Values under keys the reader does not use are counted, not stored: 64 lists of 2^16 None
    # each would take 64 MiB if materialised, within a 16 MiB budget they read. This file is
    # otherwise broken (no STOP) so it fails, at its end, not at the budget.
    lists = b"".join(b"](" + b"N" * (1 << 16) + b"ea" for _ in range(64))
    nones = P4 + b"}(\x8c\x08segments]\x8c\x0ddevice_traces]]a\x8c\x04junk]" + lists + b"u"
    zst = subprocess.run(["zstd", "-q", "-c", "-19"], input=nones, capture_output=True, check=True).stdout
    case("none_lists_unknown_key.pickle.zst", zst, len(nones), "unexpected end of data before STOP",
         limits={"memory_floor_bytes": 16 << 20, "memory_per_pickle_byte": 0})


def main():
    for name in os.listdir(HERE):
        if name != os.path.basename(__file__):
            os.remove(os.path.join(HERE, name))
    for make in (framing_and_headers, truncated_opcodes, huge_lengths, nesting_and_limits, memo_cases,
                 code_payloads, not_snapshots, wrong_field_types, structure_errors, compression, compressed_trailers,
                 out_of_range_values, memory_and_sharing):
        make()
    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(CASES, f, indent=1)
        f.write("\n")
    print(f"{len(CASES)} cases in {HERE}")


if __name__ == "__main__":
    main()
