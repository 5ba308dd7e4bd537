#!/bin/bash
# usage: bench/model_ab.sh TRACE ROUNDS BENCH_MODEL [BENCH_MODEL...]   (REPS=5 by default)
# The model's speed A/B: bench_model BM_WhatIfReplay/100 of several builds on one trace, run in
# turn ROUNDS times (interleaved, so the machine's load falls on all of them alike). Per round the
# best CPU time of REPS repetitions (default 5); printed: the median of those over the rounds, in
# ms per replay and M events/s of CPU time (user + sys of the benchmark thread).
trace=$1; rounds=$2; shift 2
declare -A all
for r in $(seq $rounds); do
  for b in "$@"; do
    out=$(RESERVOIR_BENCH_TRACE=$trace $b --benchmark_filter='WhatIfReplay/100' --benchmark_repetitions=${REPS:-5} --benchmark_format=json 2>/dev/null)
    v=$(echo "$out" | python3 -c '
import json,sys
d=json.load(sys.stdin)
rs=[x for x in d["benchmarks"] if x.get("run_type")=="iteration"]
cpu=sorted(x["cpu_time"] for x in rs)
cpu=[cpu[0]]
ev=rs[0]["events"]
print(cpu[len(cpu)//2], ev)')
    all[$b]="${all[$b]} ${v% *}"; ev=${v#* }
  done
done
for b in "$@"; do
  python3 -c '
import sys,statistics
v=[float(x) for x in sys.argv[2].split()]
ev=float(sys.argv[3])
m=statistics.median(v)
print(f"{sys.argv[1]}: median of mins {m:.3f} ms ({ev/m/1e3:.2f} M ev/s), best {min(v):.3f} ms ({ev/min(v)/1e3:.2f} M ev/s)  all: "+" ".join(f"{x:.2f}" for x in v))' "$b" "${all[$b]}" "$ev"
done
