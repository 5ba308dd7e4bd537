#!/usr/bin/env bash
# A 100-candidate sweep (settings included, --jobs 2) against Python's pickle.load of the same
# file, and optionally an earlier build's sweep (before vs after), one after the other in one
# run. Medians of RUNS runs of wall and CPU time (user + sys; steadier on a shared machine).
# usage: bench/sweep_vs_pickle.sh TRACE.pickle [RESERVOIR] [RUNS] [BEFORE_RESERVOIR]
# PYTHON=/path/to/python picks the interpreter whose pickle.load is timed (default: python3).
set -euo pipefail
trace="$1"
after="${2:-$(cd "$(dirname "$0")/.." && pwd)/build/replay/cli/reservoir}"
runs="${3:-3}"
before="${4:-}"
echo "file: $trace ($(stat -c %s "$trace") bytes), medians of $runs runs, load: $(cut -d' ' -f1-3 /proc/loadavg)"

# timed CMD...: one line per run, "wall_s cpu_s peak_rss_kib".
source "$(dirname "$0")/timing.sh"
sweep() { timed "$1" sweep "$trace" --jobs 2 --json --no-capture-json; }

py=$(timed "${PYTHON:-python3}" -c "
import pickle, sys
with open(sys.argv[1], 'rb') as f: pickle.load(f)
" "$trace")
new=$(sweep "$after")
old=""
[ -n "$before" ] && old=$(sweep "$before")

python3 - "$py" "$new" "$old" "$("${PYTHON:-python3}" -c 'import platform; print(platform.python_version())')" <<'PY'
import statistics as st, sys
def med(block):
    rows = [list(map(float, l.split())) for l in block.strip().splitlines() if l.strip()]
    return [st.median(c) for c in zip(*rows)] if rows else None
py, new, old = med(sys.argv[1]), med(sys.argv[2]), med(sys.argv[3])
row = lambda name, m: print(f"{name:22s} wall {m[0]:.3f} s, cpu {m[1]:.3f} s, peak RSS {m[2]/1024:.0f} MiB"
                            f"  -> {m[0]/py[0]:.2f}x pickle.load (wall), {m[1]/py[1]:.2f}x (cpu)")
print(f"python pickle.load ({sys.argv[4]}): wall {py[0]:.3f} s, cpu {py[1]:.3f} s, peak RSS {py[2]/1024:.0f} MiB")
row("sweep (after):", new)
if old:
    row("sweep (before):", old)
    print(f"after vs before: {old[0]/new[0]:.2f}x faster (wall), {old[1]/new[1]:.2f}x (cpu)")
PY
