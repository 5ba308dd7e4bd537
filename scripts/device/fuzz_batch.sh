#!/bin/bash
# Fuzzing on the device machine's idle cores (issue 16's CPU-hours): both fuzzers, N workers each,
# for SECONDS, then each corpus merged (-merge=1) into what is new. Run from a carried folder
# holding whatif_fuzzer, snapshot_reader_fuzzer (built here with clang, -static-libstdc++), lib/
# (the shared libraries they need that the device lacks), snapshot.dict, seeds/whatif and
# seeds/reader. Results go to $OUT: fuzz-results.tar.xz (artifacts, the merged new inputs, every
# job's log) and fuzz-summary.txt (runs and seconds per job).
#   fuzz_batch.sh SECONDS WORKERS_PER_FUZZER
set -u
cd "$(dirname "$0")"
SECS=${1:-500}
N=${2:-8}
HERE=$PWD
export LD_LIBRARY_PATH=$HERE/lib
W=/tmp/fuzz; rm -rf $W; mkdir -p $W/whatif/corpus $W/reader/corpus $W/artifacts $W/new/whatif $W/new/reader
cp seeds/whatif/* $W/whatif/corpus/
cp seeds/reader/* $W/reader/corpus/
(cd $W/whatif && nice -n 5 $HERE/whatif_fuzzer -jobs=$N -workers=$N -rss_limit_mb=2048 -timeout=30 -max_len=512 \
  -max_total_time=$SECS -artifact_prefix=$W/artifacts/whatif- -print_final_stats=1 corpus > run.log 2>&1) &
(cd $W/reader && nice -n 5 $HERE/snapshot_reader_fuzzer -jobs=$N -workers=$N -rss_limit_mb=2048 -timeout=10 \
  -max_len=65536 -dict=$HERE/snapshot.dict -max_total_time=$SECS -artifact_prefix=$W/artifacts/reader- \
  -print_final_stats=1 corpus > run.log 2>&1) &
wait
# What the runs added beyond the seeds, minimised.
$HERE/whatif_fuzzer -merge=1 $W/new/whatif $W/whatif/corpus > $W/whatif/merge.log 2>&1
$HERE/snapshot_reader_fuzzer -merge=1 -max_len=65536 $W/new/reader $W/reader/corpus > $W/reader/merge.log 2>&1
{
  for f in $W/whatif/fuzz-*.log $W/reader/fuzz-*.log; do
    echo "$f: $(grep -h 'stat::number_of_executed_units' $f | tail -1) $(grep -h 'Done [0-9]* runs' $f | tail -1)"
    grep -h -m3 'ERROR\|SUMMARY\|==ERROR\|deadly signal\|out-of-memory\|timeout' $f
  done
  ls -la $W/artifacts
  echo "new whatif inputs: $(ls $W/new/whatif | wc -l), new reader inputs: $(ls $W/new/reader | wc -l)"
} > $OUT/fuzz-summary.txt 2>&1
(cd $W && tar cf - artifacts new whatif/*.log reader/*.log | xz -6 -T16 > $OUT/fuzz-results.tar.xz)
cat $OUT/fuzz-summary.txt
