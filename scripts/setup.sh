#!/usr/bin/env bash
# Fresh Debian 12 machine to a first answer: install what is missing, build, and run the main
# job on a bundled trace: what would empty_cache() right after the checkpoint load change?
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$root/build" --target reservoir reservoir_python  # the CLI and build/python (import reservoir)
"$root/build/replay/cli/reservoir" whatif "$root/traces/samples/resume-expandable/resume-main.rank0.pickle" \
  --cleanup after:state_dict_loader.py:load --probe after:state_dict_loader.py:load
