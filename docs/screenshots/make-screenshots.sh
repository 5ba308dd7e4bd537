#!/usr/bin/env bash
# Regenerates the GUI screenshots in this folder (headless): bash docs/screenshots/make-screenshots.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
gui="${1:-build-gui}/gui/reservoir-gui"
out=docs/screenshots
main=traces/samples/resume-expandable/resume-main.rank0.pickle
export QT_QPA_PLATFORM=offscreen
"$gui" "$main" --view timeline --screenshot "$out/timeline.png"
"$gui" "$main" --view state --cursor peak --screenshot "$out/state-at-peak.png"
"$gui" "$main" --view events --cursor peak --search "action:segment_map size>=1GiB" --screenshot "$out/events.png"
"$gui" "$main" --view callsites --cursor peak --screenshot "$out/callsites.png"
"$gui" "$main" --view whatif --cleanup after:state_dict_loader.py:load --probe after:state_dict_loader.py:load \
  --screenshot "$out/whatif-cleanup-after-load.png"
"$gui" traces/samples/resume-tiny/resume-main.rank0.pickle traces/samples/resume-tiny/resume-main.rank1.pickle \
  --view compare --screenshot "$out/compare-ranks.png"
"$gui" traces/samples/resume-tiny/fresh.rank0.pickle traces/samples/resume-tiny/resume-main.rank0.pickle \
  --view compare --time-axis --screenshot "$out/compare-fresh-vs-resumed.png"
"$gui" traces/samples/resume-tiny/fresh.rank0.pickle traces/samples/resume-tiny/resume-main.rank0.pickle \
  --view compare --align nccl:_all_gather_base --screenshot "$out/compare-aligned-on-annotation.png"
"$gui" "$main" --view segments --screenshot "$out/segments.png"
# A laptop's screen: the side panels shrink, nothing is cut off
"$gui" "$main" --view whatif --cleanup after:state_dict_loader.py:load --size 1280x720 \
  --screenshot "$out/whatif-1280x720.png"
"$gui" "$main" --view timeline --time-axis --export-plot "$out/timeline-plot.svg"
