#!/bin/bash
# The cargo-fuzz targets on the lent machine's 16 cores for $1 seconds each (all at once): built here
# (`cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz build -O`), stripped and packed as .devrun/fuzz/bin.tar.xz (a bin/
# folder) with the corpora as .devrun/fuzz/corpus.tar.xz (carry .devrun; the pair must stay under 64 MiB). Returns $OUT/stats.txt (per target: workers, executions, exec/s,
# coverage, crashes), $OUT/corpus.tar.gz (the grown corpora, to continue from) and $OUT/crashes.tar.gz.
set -u
T=$1; W=/tmp/fuzzrun; rm -rf $W; mkdir -p $W; tar -C $W -xJf .devrun/fuzz/corpus.tar.xz
tar -C $W -xJf .devrun/fuzz/bin.tar.xz
# Workers per target: FUZZ_WORKERS="engine=7 validate=2 ..." overrides the default split of 16 cores.
declare -A workers=([engine]=3 [validate]=2 [assemble]=2 [read_binary]=2 [npy]=2 [amber]=2 [cli]=3 [lower]=0)
# A target given 0 workers is not run.
for kv in ${FUZZ_WORKERS:-}; do workers[${kv%%=*}]=${kv#*=}; done
for t in "${!workers[@]}"; do [ "${workers[$t]}" -gt 0 ] || unset "workers[$t]"; done
declare -A extra=([engine]="-rss_limit_mb=4096 -timeout=30" [assemble]="-max_len=65536 -timeout=10" \
  [amber]="-max_len=16384" [validate]="" [read_binary]="" [lower]="" [npy]="" \
  [cli]="-close_fd_mask=3 -timeout=20 -rss_limit_mb=4096")
bin=$W/bin
for t in "${!workers[@]}"; do
  mkdir -p $W/run/$t $W/corpus/$t
  # Absolute corpus and artifact paths: the cli target works in a scratch directory of its own.
  (cd $W/run/$t && $bin/$t $W/corpus/$t -workers=${workers[$t]} -jobs=${workers[$t]} -max_total_time=$T \
     -artifact_prefix=$W/run/$t/ -print_final_stats=1 ${extra[$t]} > driver.log 2>&1) &
done
wait
for t in "${!workers[@]}"; do
  cd $W/run/$t
  ex=$(cat fuzz-*.log | grep -h 'number_of_executed_units' | awk '{s+=$2} END {print s}')
  eps=$(cat fuzz-*.log | grep -h 'average_exec_per_sec' | awk '{s+=$2} END {print s}')
  cov=$(cat fuzz-*.log | grep -ho 'cov: [0-9]*' | awk '{if ($2>m) m=$2} END {print m}')
  crashes=$(ls | grep -cE '^(crash|leak|timeout|oom)-')
  echo "$t workers=${workers[$t]} seconds=$T executions=$ex exec/s=$eps max-cov=$cov crashes=$crashes corpus=$(ls $W/corpus/$t | wc -l)"
  cd - >/dev/null
done > $OUT/stats.txt
tar -C $W -czf $OUT/corpus.tar.gz corpus
(cd $W/run && tar czf $OUT/crashes.tar.gz $(ls -d */crash-* */leak-* */timeout-* */oom-* 2>/dev/null) */fuzz-0.log)
cat $OUT/stats.txt
