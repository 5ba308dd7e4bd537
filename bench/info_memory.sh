#!/usr/bin/env bash
# `reservoir info --json --no-capture-json` of one build against another (before vs after) and,
# unless NO_PICKLE=1, Python's pickle.load of the same file, one after the other in one run:
# CPU time (user + sys, steadier on a shared machine), wall time and peak RSS, the RSS also as a
# multiple of the file's size. Medians of RUNS runs.
# usage: bench/info_memory.sh TRACE.pickle BEFORE_RESERVOIR [AFTER_RESERVOIR] [RUNS]
set -euo pipefail
trace="$1"
before="$2"
after="${3:-$(cd "$(dirname "$0")/.." && pwd)/build/replay/cli/reservoir}"
runs="${4:-1}"
bytes=$(stat -c %s "$trace")
echo "file: $trace ($bytes bytes), medians of $runs runs, load: $(cut -d' ' -f1-3 /proc/loadavg)"

# timed CMD...: one line per run, "wall_s cpu_s peak_rss_kib".
source "$(dirname "$0")/timing.sh"
info() { timed "$1" info "$trace" --json --no-capture-json; }

old=$(info "$before")
new=$(info "$after")
py=""
if [ "${NO_PICKLE:-0}" != 1 ]; then
  py=$(timed python3 -c "
import pickle, sys
with open(sys.argv[1], 'rb') as f: pickle.load(f)
" "$trace")
fi

python3 - "$bytes" "$old" "$new" "$py" <<'PY'
import statistics as st, sys
def med(block):
    rows = [list(map(float, l.split())) for l in block.strip().splitlines() if l.strip()]
    return [st.median(c) for c in zip(*rows)] if rows else None
size = int(sys.argv[1])
old, new, py = med(sys.argv[2]), med(sys.argv[3]), med(sys.argv[4])
ratio = lambda a, b: f"{a / b:.2f}x" if b > 0 else "n/a (under the clock's 10 ms)"
def row(name, m):
    rss = m[2] * 1024
    print(f"{name:14s} wall {m[0]:7.2f} s, cpu {m[1]:7.2f} s, peak RSS {rss / 1e6:8.1f} MB ({rss / size:.2f}x the file)")
row("info before", old)
row("info after", new)
print(f"after vs before: cpu {ratio(old[1], new[1])} less, peak RSS {ratio(old[2], new[2])} less")
if py:
    row("pickle.load", py)
    print(f"info after vs pickle.load: cpu {ratio(py[1], new[1])} faster, peak RSS {ratio(py[2], new[2])} less")
PY
