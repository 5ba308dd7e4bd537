"""python3 -m reservoir.capture --world-size W --rank R [--param NAME=VALUE]... [--out DIR] [--tag T]
[--max-entries N] [--keep-steps K] [--stacks python|all] -- SCRIPT [ARGS...]   (or -- -m MODULE [ARGS...])

Runs SCRIPT in this process as rank R of a W-rank job (PyTorch's fake process group, CUDA
device 0) and writes DIR/T.wW.rankR.pickle and DIR/T.wW.rankR.json (captures at several world
sizes into one DIR keep their own files). Without --world-size, under torchrun, it records this
real rank instead (no fake group). On a CUDA out-of-memory each rank also writes
DIR/rankR_memory_snapshot.pickle (and .json) at once, as torchtitan names its dumps.
"""

import argparse
import os
import runpy
import signal
import sys
import traceback
from typing import List, Optional, Tuple

from . import sidecar
from .errors import CaptureError
from .session import STACKS, Capture

EXIT_USAGE = 2
DESCRIPTION = ("Runs SCRIPT in this process as rank R of a W-rank job (PyTorch's fake process group, CUDA device 0) "
               "and writes OUT/TAG.wW.rankR.pickle and OUT/TAG.wW.rankR.json (the snapshot and its sidecar); on a CUDA "
               "out-of-memory also OUT/rankR_memory_snapshot.pickle. Needs torch only to run SCRIPT.")
USAGE_TAIL = " -- SCRIPT [ARGS...]   (or -- -m MODULE [ARGS...])"


def split_command(argv: List[str]) -> Tuple[List[str], List[str]]:
    """The kit's options and the program's command, split at the first '--'."""
    if "--" not in argv:
        raise CaptureError("put '--' before the program: python3 -m reservoir.capture --world-size W -- SCRIPT [ARGS...]")
    i = argv.index("--")
    command = argv[i + 1:]
    if not command or (command[0] == "-m" and len(command) < 2):
        raise CaptureError("no program after '--' (SCRIPT [ARGS...] or -m MODULE [ARGS...])")
    return argv[:i], command


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python3 -m reservoir.capture", description=DESCRIPTION)
    p.add_argument("--world-size", type=int, help="the job's world size W (omit under torchrun: record the real rank)")
    p.add_argument("--rank", type=int, help="the rank R this process plays (default 0; needs --world-size)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting of the run, recorded in the sidecar's config (repeatable)")
    p.add_argument("--out", default="capture", help="output folder (default: ./capture)")
    p.add_argument("--tag", help="file name stem (default: the script's name)")
    p.add_argument("--max-entries", type=int, help="keep only the last N trace events (a ring buffer; default all)")
    p.add_argument("--keep-steps", type=int, metavar="K",
                   help="keep only the history of the last K optimizer steps (for long jobs with a ring buffer)")
    p.add_argument("--stacks", choices=STACKS, default="python", help="stack frames per event (default python)")
    p.usage = " ".join(p.format_usage().split()[1:]) + USAGE_TAIL  # the program after '--'
    return p


def _default_tag(command: List[str]) -> str:
    target = command[1] if command[0] == "-m" else command[0]
    base = os.path.basename(target.rstrip("/"))
    return base[:-3] if base.endswith(".py") else base


def make_capture(options: argparse.Namespace, command: List[str], environ=None) -> Capture:
    environ = os.environ if environ is None else environ
    config = sidecar.parse_params(options.param)
    fake = options.world_size is not None
    if options.rank is not None and not fake:
        raise CaptureError("--rank needs --world-size (without it the kit records the real rank torchrun started)")
    rank = (options.rank or 0) if fake else int(environ.get("RANK", 0))
    world = options.world_size if fake else int(environ.get("WORLD_SIZE", 1))
    tag = options.tag or _default_tag(command)
    stem = os.path.join(options.out, f"{tag}.w{world}.rank{rank}")
    return Capture(stem, max_entries=options.max_entries, stacks=options.stacks, params=config,
                   world_size=options.world_size, rank=rank if fake else None, fake_group=fake, tag=tag,
                   command=list(command), environ=environ, keep_steps=options.keep_steps)


def run_program(command: List[str]) -> None:
    """The program as `python3 SCRIPT ARGS` (or `python3 -m MODULE ARGS`) would run it, here."""
    if command[0] == "-m":
        sys.argv = [command[1]] + command[2:]
        runpy.run_module(command[1], run_name="__main__", alter_sys=True)
        return
    script = command[0]
    if not os.path.exists(script):
        raise CaptureError(f"{script}: no such file")
    sys.argv = list(command)
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


def _exit_code(e: SystemExit) -> int:
    if e.code is None:
        return 0
    if isinstance(e.code, int):
        return e.code
    print(e.code, file=sys.stderr)
    return 1


def _terminate(signum, frame):
    raise SystemExit(128 + signum)  # unwinds through the capture: the snapshot is written


def _summary(cap: Capture) -> str:
    import json

    with open(cap.stem + ".json") as f:
        facts = json.load(f)
    stats = facts.get("memory_stats", {})
    reset = facts.get("reset_peaks_after_event")
    check = f"reservoir check {cap.stem}.pickle" + (f" --reset-peaks event:{reset}" if reset is not None else "")
    text = (f"reservoir.capture: wrote {cap.stem}.pickle ({facts.get('events')} events, {facts.get('dump_reason')}) "
            f"and {cap.stem}.json; peak reserved {stats.get('reserved_bytes.all.peak')} bytes"
            f"{' since the last reset_peak_memory_stats()' if reset is not None else ''}\n  check: {check}")
    if cap.oom_path:
        text += f"\n  out of memory: its trace at that moment is {cap.oom_path}"
    return text


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--" not in argv and ("-h" in argv or "--help" in argv):
        parser().print_help()  # needs no torch and no program
        return 0
    try:
        kit_args, command = split_command(argv)
        options = parser().parse_args(kit_args)
        cap = make_capture(options, command)
    except (CaptureError, ValueError) as e:
        print(f"reservoir.capture: {e}", file=sys.stderr)
        return EXIT_USAGE
    if threading_is_main():
        signal.signal(signal.SIGTERM, _terminate)
    code = 0
    try:
        with cap:
            run_program(command)
    except SystemExit as e:
        code = _exit_code(e)
    except CaptureError as e:
        print(f"reservoir.capture: {e}", file=sys.stderr)
        code = EXIT_USAGE
    except KeyboardInterrupt:
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    if cap.dumps:
        print(_summary(cap), file=sys.stderr)
    return code


def threading_is_main() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()
