#!/usr/bin/env bash
# Python's pickle.load versus Reservoir on one file: the reader alone, and `reservoir info` end
# to end (read, summary, request stream, window start, peaks with stacks), parsing the pickle
# (RESERVOIR_CACHE=off) and loading what an earlier read kept (the snapshot cache, in a folder
# of its own, filled by one read first). Medians of RUNS runs (default 5) of wall time and of
# CPU time (user + sys, steadier on a shared machine), and peak RSS.
# usage: bench/compare_python.sh TRACE.pickle [BUILD_DIR] [RUNS]
set -euo pipefail
trace="$1"
build="${2:-$(cd "$(dirname "$0")/.." && pwd)/build}"
runs="${3:-5}"
size=$(stat -c %s "$trace")
echo "file: $trace ($size bytes), medians of $runs runs"

# timed CMD...: one line per run, "wall_s cpu_s peak_rss_kib".
source "$(dirname "$0")/timing.sh"

py=$(timed python3 -c "
import pickle, sys
with open(sys.argv[1], 'rb') as f: pickle.load(f)
" "$trace")
info=$(RESERVOIR_CACHE=off timed "$build/replay/cli/reservoir" info "$trace" --json --no-capture-json)
cache=$(mktemp -d)
RESERVOIR_CACHE=$cache "$build/replay/cli/reservoir" info "$trace" --json --no-capture-json > /dev/null
cached=$(RESERVOIR_CACHE=$cache timed "$build/replay/cli/reservoir" info "$trace" --json --no-capture-json)
entry=$(du -cb "$cache" | tail -1 | cut -f1)
rm -rf "$cache"
reader=$(RESERVOIR_BENCH_TRACE="$trace" "$build/bench/bench_reader" --benchmark_repetitions="$runs" \
           --benchmark_format=json 2>/dev/null |
         python3 -c "import json,sys,statistics as s; r=[b for b in json.load(sys.stdin)['benchmarks'] if b.get('run_type')=='iteration']; print(s.median(b['real_time'] for b in r)/1000, s.median(b['cpu_time'] for b in r)/1000)")
rss_file=$(mktemp)
RESERVOIR_BENCH_TRACE="$trace" /usr/bin/time -o "$rss_file" -f "%M" "$build/bench/bench_reader" \
  --benchmark_min_time=0.01 > /dev/null 2>&1
reader_rss=$(tail -1 "$rss_file")
rm -f "$rss_file"

python3 - "$size" "$py" "$info" "$reader" "$reader_rss" "$cached" "$entry" <<'PY'
import statistics as st, sys
size = int(sys.argv[1])
def med(block):
    rows = [list(map(float, l.split())) for l in block.strip().splitlines() if l.strip()]
    return [st.median(c) for c in zip(*rows)]
py_wall, py_cpu, py_rss = med(sys.argv[2])
info_wall, info_cpu, info_rss = med(sys.argv[3])
rd_wall, rd_cpu = map(float, sys.argv[4].split())
rd_rss = float(sys.argv[5])
mib = lambda kib: f"{kib/1024:.0f} MiB ({kib*1024/size:.2f}x the file)"
print(f"python pickle.load:      wall {py_wall:.3f} s, cpu {py_cpu:.3f} s, peak RSS {mib(py_rss)}")
print(f"reservoir reader alone:  wall {rd_wall:.3f} s, cpu {rd_cpu:.3f} s ({size/rd_wall/1e6:.0f} MB/s), "
      f"peak RSS {mib(rd_rss)}  -> {py_wall/rd_wall:.1f}x (wall), {py_cpu/rd_cpu:.1f}x (cpu)")
print(f"reservoir info end to end: wall {info_wall:.3f} s, cpu {info_cpu:.3f} s, peak RSS {mib(info_rss)}"
      f"  -> {py_wall/info_wall:.1f}x (wall), {py_cpu/info_cpu:.1f}x (cpu)")
c_wall, c_cpu, c_rss = med(sys.argv[6])
entry = int(sys.argv[7])
print(f"reservoir info from the cache: wall {c_wall:.3f} s, cpu {c_cpu:.3f} s, peak RSS {mib(c_rss)}"
      f"  -> {py_wall/c_wall:.1f}x (wall), {py_cpu/c_cpu:.1f}x (cpu); the entry {entry/1e6:.1f} MB"
      f" ({entry/size:.2f}x the file)")
PY
