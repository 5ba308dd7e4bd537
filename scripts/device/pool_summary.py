#!/usr/bin/env python3
"""The table of validate_pools.sh: per trace, `check`'s verdict, `replay --backend torch`'s
verdict on the recording (model_vs_recording_exact, the same rule), the real allocator against
the prediction, and the model on the real allocator's own recording; then the totals.

  pool_summary.py RUNS_DIR     (RUNS_DIR/NAME.check.json and NAME.replay.json per trace)
"""
import glob
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def torch_run(replay):
    for b in (replay or {}).get("backends", []):
        if b.get("backend") == "torch":
            return b
    return None


def main():
    runs = sys.argv[1]
    names = sorted({os.path.basename(p)[: -len(".check.json")] for p in glob.glob(os.path.join(runs, "*.check.json"))})
    rows, agree, both_exact, check_exact, torch_exact, own_exact, pooled = [], 0, 0, 0, 0, 0, []
    for n in names:
        c = load(os.path.join(runs, n + ".check.json"))
        r = load(os.path.join(runs, n + ".replay.json"))
        b = torch_run(r)
        ce = c is not None and bool(c.get("exact"))
        re_ = r is not None and bool(r.get("model_vs_recording_exact"))
        check_exact += ce
        if ce and re_:
            both_exact += 1
        if r is not None and ce == re_:
            agree += 1
        if b is None:
            err = open(os.path.join(runs, n + ".replay.err")).read()[-300:] if os.path.exists(os.path.join(runs, n + ".replay.err")) else ""
            rows.append(f"{n}: check={'EXACT' if ce else 'NOT EXACT'} "
                        f"replay_on_recording={'EXACT' if re_ else 'NOT EXACT' if r else 'none'} "
                        f"no torch run ({err.strip()})")
            continue
        vs = b["vs_model"]
        own = b.get("model_on_own_recording") or {}
        te = bool(vs.get("exact"))
        torch_exact += te
        own_exact += bool(own.get("exact"))
        pools = [x for x in b.get("notes", []) if x.startswith("private pools on the real allocator")]
        if pools:
            pooled.append(n)
        verdict = "EXACT" if te else ("figures equal" if vs.get("figures_equal") else "DIFFERENT")
        diff = vs.get("first_difference")
        rows.append(
            f"{n}: check={'EXACT' if ce else 'NOT EXACT'} replay_on_recording={'EXACT' if re_ else 'NOT EXACT'} "
            f"torch_vs_prediction={verdict}{' (first difference at event %s: %s)' % (diff['event_index'], diff['reason']) if diff else ''} "
            f"own_recording={'EXACT' if own.get('exact') else 'NOT EXACT'} peak_reserved={b['peak_reserved']} "
            f"final_reserved={b['final_reserved']}" + (f" | {pools[0]}" if pools else ""))
    print("\n".join(rows))
    print(f"\ntraces: {len(names)}; check exact on {check_exact}; replay says the model on the recording is EXACT on "
          f"{both_exact} of the {check_exact} that check finds exact; replay and check agree on {agree} of {len(names)}")
    print(f"torch run EXACT against the prediction: {torch_exact}; the model on the real allocator's own recording "
          f"EXACT: {own_exact}; traces with private pools replayed on the real allocator: {len(pooled)} ({', '.join(pooled)})")


if __name__ == "__main__":
    main()
