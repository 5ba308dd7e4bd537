#!/usr/bin/env bash
# Parse speed and peak memory: Python's pickle.load versus Reservoir's reader on one file.
# usage: bench/compare_python.sh TRACE.pickle [BUILD_DIR]
set -euo pipefail
trace="$1"
build="${2:-$(cd "$(dirname "$0")/.." && pwd)/build}"
size=$(stat -c %s "$trace")
echo "file: $trace ($size bytes)"
py=$( { /usr/bin/time -f "%e %M" python3 -c "
import pickle, time, sys
t = time.perf_counter()
with open(sys.argv[1], 'rb') as f: pickle.load(f)
print(time.perf_counter() - t)
" "$trace" ; } 2>&1 )
py_s=$(echo "$py" | head -1); py_rss=$(echo "$py" | tail -1 | awk '{print $2}')
ours=$( { /usr/bin/time -f "%e %M" "$build/replay/cli/reservoir" info "$trace" --json --no-capture-json > /dev/null; } 2>&1 | tail -1)
best=$(RESERVOIR_BENCH_TRACE="$trace" "$build/bench/bench_reader" --benchmark_repetitions=3 --benchmark_format=json 2>/dev/null |
       python3 -c "import json,sys; r=json.load(sys.stdin)['benchmarks']; print(min(b['real_time'] for b in r if b.get('run_type')=='iteration')/1000.0)")
rss=$( { RESERVOIR_BENCH_TRACE="$trace" /usr/bin/time -f "%M" "$build/bench/bench_reader" --benchmark_min_time=0.01 > /dev/null; } 2>&1 | tail -1)
python3 - "$size" "$py_s" "$py_rss" "$best" <<PY
import sys
size, py_s, py_rss, ours = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
print(f"python pickle.load: {py_s:.3f} s, peak RSS {py_rss/1024:.1f} MiB ({py_rss*1024/size:.2f}x the file)")
print(f"reservoir reader:   {ours:.3f} s ({size/ours/1e6:.0f} MB/s)  -> {py_s/ours:.1f}x faster")
PY
echo "reservoir reader peak RSS (bench process, one read): $((rss/1024)) MiB"
