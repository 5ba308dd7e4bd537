# Sourced by the bench scripts. timed CMD...: runs CMD $runs times, one line per run:
# "wall_s cpu_s peak_rss_kib" (CPU = user + sys, steadier than wall on a shared machine).
timed() {
  local f
  f=$(mktemp)
  for _ in $(seq "$runs"); do
    /usr/bin/time -o "$f" -f "%e %U %S %M" "$@" > /dev/null 2>&1
    awk '{print $1, $2 + $3, $4}' "$f"
  done
  rm -f "$f"
}
