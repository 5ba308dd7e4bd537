#!/usr/bin/env python3
"""One summary block per `reservoir replay --json` run (used by gpu_validate.sh)."""
import json, sys

path, name, rc, ms = sys.argv[1:5]
j = json.load(open(path))
G = 2**30
def gib(b): return f"{b / G:.3f}GiB({b})"
m = j["model"]
prog = j["program"]
print(f"== {name} verdict={'EXACT' if j.get('exact') else 'DIFFERENT'} rc={rc} {int(ms)/1000:.1f}s events={j['events']} requests={prog['requests']} "
      f"deferred={prog['record_stream_frees']} settings='{j['settings']}' fraction={j['fraction']} "
      f"model_vs_recording={'exact' if j['model_vs_recording_exact'] else 'NOT EXACT'}")
print(f"   model: peak_res={gib(m['peak_reserved'])} peak_alloc={gib(m['peak_allocated'])} "
      f"final_res={m['final_reserved']} probes={[p['reserved'] for p in m['probes']]} ooms={m['ooms']} "
      f"rate={m['timing']['requests_per_second']:.0f}/s")
for b in j["backends"]:
    c = b["vs_model"]
    t = b["timing"]
    line = (f"   {b['backend']}: vs_model={'EXACT' if c['exact'] else 'DIFFERENT'} figures={'EQUAL' if c['figures_equal'] else 'DIFFERENT'} events={c['events_compared']} "
            f"stats={c['stats_compared']} peak_res={gib(b['peak_reserved'])} peak_alloc={gib(b['peak_allocated'])} "
            f"probes={[p['reserved'] for p in b['probes']]} ooms={b['ooms']} rate={t['requests_per_second']:.0f}/s "
            f"wall={t['wall_seconds']:.3f}s")
    print(line)
    if c["first_difference"]:
        d = c["first_difference"]
        print(f"     first difference at event {d['event_index']}: {d['reason']}\n       expected {d['expected']}\n       got      {d['got']}")
    for k in ("figure_mismatches", "stats_mismatches", "layout_mismatches"):
        for x in c[k][:4]:
            print(f"     {k}: {x['what']}: expected {x['expected']} got {x['got']}")
    o = b.get("model_on_own_recording")
    if o:
        fd = o["first_divergence"]
        print(f"     model on its own recording: {'EXACT' if o['exact'] else 'NOT EXACT'} events={o['events_compared']} "
              f"stats={o['stats_compared']}" + (f" diverges at {fd['event_index']}: {fd['expected']} / {fd['simulated']}" if fd else "")
              + "".join(f" | {x['what']}: {x['expected']} vs {x['got']}" for x in (o['stats_mismatches'] + o['layout_mismatches'])[:3]))
    dm = b.get("device_memory")
    if dm:
        print(f"     device: total={dm['total']} outside_at_start={dm['outside_cache_at_start']} at_peak_op={dm['measured_at_op']} "
              f"reserved={dm['reserved_at_measure']} used={dm['used_at_measure']} cache_on_device={dm['cache_on_device_at_measure']} "
              f"granularity={dm['driver_granularity']} ballast={dm['ballast']} fits={dm['fits']} refused={dm['refused']} failures={dm['driver_failures']}")
    if b["backend"] == "cuda":
        print(f"     driver: allocs={t['driver_allocs']} in {t['alloc_seconds']:.4f}s, frees={t['driver_frees']} in {t['free_seconds']:.4f}s, sync {t['sync_seconds']:.4f}s")
    cl = t["cleanups"]
    if cl:
        tot = sum(x["seconds"] for x in cl)
        ins = [x for x in cl if not x["what"].startswith("recorded")]
        print(f"     empty_cache: {len(cl)} calls, {tot*1000:.2f} ms total; inserted: " +
              "; ".join(f"{x['what']} released {x['released']} in {x['seconds']*1000:.3f} ms (free {x['free_seconds']*1000:.3f}, sync {x['sync_seconds']*1000:.3f}, {x['driver_frees']} frees)" for x in ins))
    if b.get("baseline"):
        bl = b["baseline"]
        print(f"     time price: driver {bl['edited_driver_seconds']*1000:.2f} ms edited vs {bl['driver_seconds']*1000:.2f} ms unedited "
              f"(+{bl['time_price_seconds']*1000:.2f} ms), driver allocs {t['driver_allocs']} vs {bl['driver_allocs']}")
    for n in b["notes"]:
        print(f"     note: {n}")
