#!/usr/bin/env bash
# The MPI driver's figures (docs/performance.md, docs/cluster.md): a sweep over every shared
# trace without MPI, under `mpirun -n 1` and under `mpirun -n 2`, each the best of REPEAT runs
# (the machine may be shared: the load average is printed with each figure), and the cost model
# of docs/cluster.md: seconds per MB read and per million events replayed.
#   bench/mpi_sweep.sh [BUILD_DIR] [TRACES_DIR]     (env: CANDIDATES=20 REPEAT=3)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
traces="${2:-$root/../shared/traces}"
candidates="${CANDIDATES:-20}"
repeat="${REPEAT:-3}"
bin="$build/replay/cli/reservoir"
mpirun=(mpirun --allow-run-as-root --oversubscribe)
[ -x "$bin" ] || { echo "no $bin: build first" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "mpirun not found (openmpi-bin)" >&2; exit 2; }
list="$(mktemp --suffix=.txt)"
trap 'rm -f "$list"' EXIT
find "$traces" -name '*.pickle' | sort >"$list"
n=$(wc -l <"$list")
mb=$(python3 -c "import os,sys; print(sum(os.path.getsize(l.strip()) for l in open(sys.argv[1]))/1e6)" "$list")
events=$(python3 - "$traces" "$list" <<'PY'
import json, os, sys
m = json.load(open(os.path.join(sys.argv[1], "MANIFEST.json")))
total = 0
for line in open(sys.argv[2]):
    rel = os.path.relpath(line.strip(), sys.argv[1])
    total += max(m.get(rel, {}).get("events_per_device", [0]))  # the busiest device is replayed
print(total)
PY
)

# best of $repeat wall-clock seconds of a command
best() {
  local b=""
  for _ in $(seq "$repeat"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    b=$(python3 -c "import sys; a=float(sys.argv[1]); t=float(sys.argv[2])-float(sys.argv[3]); print(f'{t:.3f}' if not a or t<a else sys.argv[1])" "${b:-0}" "$t1" "$t0")
  done
  echo "$b"
}

sweep=("$bin" sweep "@$list" --max-candidates "$candidates" --jobs 1 --json)
echo "traces: $n files, $mb MB, $events events (busiest device), $candidates candidates each; $(nproc) cores"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
read_s=$(best "$bin" check "@$list" --json)
echo "check (read + one replay each), no MPI: $read_s s   load $(cut -d' ' -f1 /proc/loadavg)"
plain=$(best "${sweep[@]}")
echo "sweep, no MPI (1 thread):           $plain s   load $(cut -d' ' -f1 /proc/loadavg)"
one=$(best "${mpirun[@]}" -n 1 "${sweep[@]}")
echo "sweep, mpirun -n 1 (1 thread):      $one s   load $(cut -d' ' -f1 /proc/loadavg)"
two=$(best "${mpirun[@]}" -n 2 "${sweep[@]}")
echo "sweep, mpirun -n 2 (1 thread each): $two s   load $(cut -d' ' -f1 /proc/loadavg)"
python3 - "$plain" "$one" "$two" "$read_s" "$mb" "$events" "$candidates" <<'PY'
import sys
plain, one, two, check, mb, events, cand = map(float, sys.argv[1:])
print(f"mpirun -n 1 vs no MPI: {100 * (one / plain - 1):+.1f}%   2 processes vs 1: {one / two:.2f}x")
# check = read + 1 replay per trace; sweep = read + (1 baseline + candidates) replays per trace
per_replay = (plain - check) / cand          # seconds per replay of every trace
per_mevent = per_replay / (events / 1e6)
per_mb = max(check - per_replay, 0) / mb
print(f"cost model: {per_mb:.3f} s per MB read, {per_mevent:.2f} s per million events replayed (one core)")
PY
