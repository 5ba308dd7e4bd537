#!/usr/bin/env python3
"""Python's own view of snapshot pickles, for the traces tests (facts from Python, not from us).

  pickle_tool.py copies SRC PREFIX     PREFIX.p2.pickle, .p3, .p5 and a gzip (.p4.gz) made by pickle.dump
  pickle_tool.py equal [--ordered] ORIG FILE...
                                       each FILE loads to exactly ORIG's object (types included;
                                       with --ordered, dict key order too)
  pickle_tool.py check-ops FILE PROTO  the opcodes are the ones Python's pickler would choose
  pickle_tool.py json FILE             the loaded object as JSON (key order kept, tuples as lists)

Compressed files are recognised by their magic bytes (zstd through the `zstd` program).
Exit status 0 = ok, 1 = the check failed (a message says why), 2 = usage / environment.
"""
import gzip
import json
import pickle
import pickletools
import subprocess
import sys


def load_bytes(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return subprocess.run(["zstd", "-q", "-dc", path], capture_output=True, check=True).stdout
    return data


def load(path):
    return pickle.loads(load_bytes(path))


def copies(src, prefix):
    obj = load(src)
    for protocol in (2, 3, 5):
        with open(f"{prefix}.p{protocol}.pickle", "wb") as f:
            pickle.dump(obj, f, protocol=protocol)
    with gzip.open(f"{prefix}.p4.gz", "wb") as f:
        pickle.dump(obj, f, protocol=4)


def first_difference(a, b, path, ordered):
    if type(a) is not type(b):
        return f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, dict):
        if ordered and list(a) != list(b):
            return f"{path}: keys {list(a)} != {list(b)}"
        if set(a) != set(b):
            return f"{path}: keys {sorted(a)} != {sorted(b)}"
        for k in a:
            d = first_difference(a[k], b[k], f"{path}[{k!r}]", ordered)
            if d:
                return d
        return None
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]", ordered)
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} != {b!r}"


def equal(args):
    ordered = args and args[0] == "--ordered"
    args = args[1:] if ordered else args
    orig = load(args[0])
    bad = 0
    for path in args[1:]:
        d = first_difference(orig, load(path), "snapshot", ordered)
        if d:
            print(f"{path}: differs from {args[0]}: {d}")
            bad += 1
    return 1 if bad else 0


BASE_OPS = {"PROTO", "STOP", "EMPTY_DICT", "EMPTY_LIST", "MARK", "SETITEMS", "SETITEM", "APPENDS", "APPEND",
            "TUPLE2", "NEWTRUE", "NEWFALSE", "NONE", "BININT1", "BININT2", "BININT", "LONG1", "BINFLOAT",
            "BINUNICODE", "BINGET", "LONG_BINGET"}
FRAMED_OPS = {"FRAME", "MEMOIZE", "SHORT_BINUNICODE", "BINUNICODE8"}
PUT_OPS = {"BINPUT", "LONG_BINPUT"}
FRAME_TARGET = 64 * 1024


def int_op(value):
    """The opcode (and LONG1 byte count) Python's save_long picks for `value`."""
    if 0 <= value <= 0xFF:
        return "BININT1", None
    if 0 <= value <= 0xFFFF:
        return "BININT2", None
    if -0x80000000 <= value <= 0x7FFFFFFF:
        return "BININT", None
    return "LONG1", len(pickle.encode_long(value))


def check_op(data, op, arg, pos, protocol, state):
    name = op.name
    if name in ("BININT1", "BININT2", "BININT", "LONG1"):
        want, nbytes = int_op(arg)
        if name != want or (nbytes is not None and data[pos + 1] != nbytes):
            return f"offset {pos}: {arg} written as {name}, Python writes {want}"
    elif name == "BINUNICODE" and protocol >= 4 and len(arg.encode("utf-8", "surrogatepass")) <= 0xFF:
        return f"offset {pos}: a short str as BINUNICODE, Python writes SHORT_BINUNICODE"
    elif name in ("MEMOIZE", "BINPUT", "LONG_BINPUT"):
        index = state["memo"] if name == "MEMOIZE" else arg
        if index != state["memo"]:
            return f"offset {pos}: memo slot {index}, expected the next one, {state['memo']}"
        if name == "LONG_BINPUT" and index <= 0xFF:
            return f"offset {pos}: LONG_BINPUT for slot {index}"
        state["memo"] += 1
    elif name in ("BINGET", "LONG_BINGET"):
        if arg >= state["memo"] or (name == "LONG_BINGET" and arg <= 0xFF):
            return f"offset {pos}: {name} {arg} with {state['memo']} memo slots"
    return None


def check_frames(data, ops):
    frames = [(pos, arg) for op, arg, pos in ops if op.name == "FRAME"]
    if not frames or frames[0][0] != 2:
        return "protocol 4+ output must open a FRAME right after PROTO"
    by_pos = {p: (op, arg) for op, arg, p in ops}
    for i, (pos, length) in enumerate(frames):
        end = pos + 9 + length
        if end not in by_pos and end != len(data):
            return f"frame at offset {pos} ends inside an opcode"
        last = i + 1 == len(frames)
        # Python commits a frame at the first object boundary past 64 KiB, or early before a
        # large str, which it writes unframed.
        op_after, arg_after = by_pos.get(end, (None, None))
        before_large = op_after is not None and op_after.name in ("BINUNICODE", "BINUNICODE8") and \
            len(arg_after.encode("utf-8", "surrogatepass")) >= FRAME_TARGET
        if not last and not before_large and not FRAME_TARGET <= length < FRAME_TARGET + 4096:
            return f"frame at offset {pos} holds {length} bytes; Python commits frames at 64 KiB"
    if frames[-1][0] + 9 + frames[-1][1] != len(data):
        return "the last frame does not end at STOP"
    return None


def check_ops(path, protocol):
    data = load_bytes(path)
    ops = list(pickletools.genops(data))
    if ops[0][0].name != "PROTO" or ops[0][1] != protocol:
        print(f"{path}: starts with {ops[0][0].name} {ops[0][1]}, expected PROTO {protocol}")
        return 1
    allowed = BASE_OPS | (FRAMED_OPS if protocol >= 4 else PUT_OPS)
    extra = {op.name for op, _, _ in ops} - allowed
    if extra:
        print(f"{path}: opcodes not expected for protocol {protocol}: {sorted(extra)}")
        return 1
    state = {"memo": 0}
    for op, arg, pos in ops:
        problem = check_op(data, op, arg, pos, protocol, state)
        if problem:
            print(f"{path}: {problem}")
            return 1
    problem = check_frames(data, ops) if protocol >= 4 else None
    if problem:
        print(f"{path}: {problem}")
        return 1
    return 0


def main(argv):
    if len(argv) >= 3 and argv[1] == "copies":
        copies(argv[2], argv[3])
        return 0
    if len(argv) >= 3 and argv[1] == "equal":
        return equal(argv[2:])
    if len(argv) == 4 and argv[1] == "check-ops":
        return check_ops(argv[2], int(argv[3]))
    if len(argv) == 3 and argv[1] == "json":
        json.dump(load(argv[2]), sys.stdout)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
