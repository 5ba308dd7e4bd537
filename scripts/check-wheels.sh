#!/usr/bin/env bash
# scripts/check-wheels.sh OUTDIR [PYTHON...]: builds a wheel per interpreter (default: every
# pyenv CPython 3.9-3.13 on this machine) with scripts/build-wheels.sh, then, for each, installs
# it with plain `pip install --no-index WHEEL` into a fresh venv of that interpreter (no system
# site packages, no torch) and runs: `reservoir --version`, a what-if through `import reservoir`,
# `reservoir whatif` (the console script) and `python -m reservoir.capture --help`. Prints one
# line per step; exits 1 when any fails. Not in CI (it builds five modules); docs/install.md has
# its output.
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:?usage: $0 OUTDIR [PYTHON...]}"
shift
pythons=("$@")
if [ ${#pythons[@]} -eq 0 ]; then
  pyroot="$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"
  for v in 3.9 3.10 3.11 3.12 3.13; do
    p=$(ls -d "$pyroot"/versions/"$v".*/bin/python3 2>/dev/null | sort -V | tail -1)
    [ -n "$p" ] && pythons+=("$p")
  done
fi
t0=$(date +%s)
"$root/scripts/build-wheels.sh" "$out" "${pythons[@]}" || echo "build-wheels.sh: some wheels failed"
echo "built in $(( $(date +%s) - t0 )) s"
trace="$root/traces/samples/resume-tiny/resume-main.rank0.pickle"
point=after:state_dict_loader.py:load
failed=0
step() {  # step NAME COMMAND...: one line, ok or FAILED with the command's last line
  local name=$1; shift
  local log; log=$("$@" 2>&1); local rc=$?
  if [ $rc -eq 0 ]; then echo "  ok     $name: $(echo "$log" | tail -1 | cut -c1-110)"
  else echo "  FAILED $name (exit $rc): $(echo "$log" | tail -1 | cut -c1-200)"; failed=1; fi
}
for py in "${pythons[@]}"; do
  tag=$("$py" -c 'import sys; print("cp%d%d" % sys.version_info[:2])')
  wheel=$(ls "$out"/reservoir-*-"$tag"-"$tag"-*.whl 2>/dev/null | head -1)
  echo "$("$py" --version 2>&1) ($py): ${wheel:+$(basename "$wheel")}"
  if [ -z "$wheel" ]; then echo "  FAILED no wheel"; failed=1; continue; fi
  venv=$(mktemp -d)/venv
  step "venv" "$py" -m venv "$venv"
  step "pip install --no-index" "$venv/bin/python" -m pip install --no-index --disable-pip-version-check "$wheel"
  step "reservoir --version" "$venv/bin/reservoir" --version
  step "import reservoir; whatif" env -u PYTHONPATH "$venv/bin/python" -c "
import reservoir
r = reservoir.load('$trace').whatif(cleanup=['$point'], probe=['$point'])
print('reserved after the load', r['whatif']['probes']['$point']['reserved'], 'peak reserved', r['whatif']['peak_reserved'])"
  step "reservoir whatif" "$venv/bin/reservoir" whatif "$trace" --cleanup "$point" --probe "$point"
  step "no torch here" "$venv/bin/python" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is not None)"
  step "python -m reservoir.capture --help" "$venv/bin/python" -m reservoir.capture --help
  rm -rf "$(dirname "$venv")"
done
exit $failed
