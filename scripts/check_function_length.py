#!/usr/bin/env python3
"""Lists functions longer than a limit (default 120 lines) in the tracked C++ sources.

A function is a definition that starts in column 0 (Google style) and ends at the next line
that starts with '}'. Exit 1 when one is over the limit and not in the allowed list (the pickle
VM's opcode dispatch, a switch over every opcode, is the one exception).
"""
import re
import subprocess
import sys
from pathlib import Path

ALLOWED = {("traces/src/pickle_machine.cpp", "PickleMachine::step"),
           ("traces/src/pickle_machine.cpp", "PickleMachine::fastStep")}
SKIP = re.compile(r"^(namespace|struct|class|enum|union|template|using|static_assert|typedef|extern|#|public|private|protected)")


def functions(path, lines):
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"^[A-Za-z_]", line) and not SKIP.match(line):
            j, opens = i, False
            while j < len(lines) and j < i + 6:
                if lines[j].rstrip().endswith(";"):
                    break
                if lines[j].rstrip().endswith("{"):
                    opens = True
                    break
                j += 1
            if opens and "(" in "".join(lines[i:j + 1]):
                k = j + 1
                while k < len(lines) and not lines[k].startswith("}"):
                    k += 1
                yield i + 1, k - i + 1, line.strip()
                i = k
        i += 1


def main():
    root = Path(__file__).resolve().parent.parent
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    files = subprocess.run(["git", "ls-files", "*.cpp", "*.h"], cwd=root, capture_output=True, text=True,
                           check=False).stdout.split()
    if not files:  # not a git checkout (a source tarball): every C++ file
        files = [str(p.relative_to(root)) for p in root.rglob("*") if p.suffix in (".cpp", ".h") and "build" not in p.parts]
    over = []
    for f in files:
        lines = (root / f).read_text(errors="replace").split("\n")
        for start, length, head in functions(f, lines):
            name = re.search(r"([A-Za-z_][A-Za-z_0-9:]*)\s*\(", head)
            if length > limit and not (name and (f, name.group(1)) in ALLOWED):
                over.append(f"{f}:{start}: {length} lines: {head[:90]}")
    for o in over:
        print(o)
    print(f"{len(over)} function(s) over {limit} lines")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
