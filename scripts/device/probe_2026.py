"""Measure, with the real allocator, one figure per PYTORCH_CUDA_ALLOC_CONF key torch
supports (and what it says about the keys added after it), for the golden tests in
tests/simulator/settings_2026_test.cpp and docs/allocator-config.md.

  python3 probe_2026.py OUT.json
Settings are applied with torch.cuda.memory._set_allocator_settings, as a re-parse at
run time; every case cleans up (empty_cache) before the next.
"""
import json, sys, traceback
import torch

MiB = 1 << 20
out = {"torch": torch.__version__, "total_memory": torch.cuda.get_device_properties(0).total_memory,
       "parse": [], "figures": {}}


def setconf(c):
    torch.cuda.memory._set_allocator_settings(c)


def parse(c):
    r = {"conf": c}
    try:
        setconf(c)
        r["settings"] = dict(torch.cuda.memory._snapshot()["allocator_settings"])
    except BaseException as e:  # noqa
        r["error"] = f"{type(e).__name__}: {e}"
    out["parse"].append(r)
    setconf("")


for c in ["max_split_size_mb:30,large_segment_size_mb:40", "large_segment_size_mb:40,max_split_size_mb:30",
          "max_split_size_mb:40,large_segment_size_mb:40", "max_non_split_rounding_mb:30,large_segment_size_mb:40",
          "large_segment_size_mb:10", "large_segment_size_mb:11", "pinned_num_register_threads:128",
          "pinned_num_register_threads:256", "pinned_num_register_threads:6", "pinned_reserve_segment_size_mb:0",
          "pinned_reserve_segment_size_mb:64", "pinned_use_cuda_host_register:True", "pinned_use_background_threads:True",
          "pinned_use_background_threads:true", "pinned_free_catch_all:True", "throw_on_cudamalloc_oom:True",
          "expandable_segments_reserve:0.5", "expandable_segments_reserve_by_class:[serving:0.25]",
          "graph_capture_record_stream_reuse:True", "graph_capture_record_stream_reuse:1",
          "release_lock_on_cudamalloc:True", "per_process_memory_fraction:0.5", "per_process_memory_fraction:1.5",
          "backend:native", "future_knob:1", "max_non_split_rounding_mb:100", "garbage_collection_threshold:0.6",
          "roundup_power2_divisions:[256:1,>:8]", "expandable_segments:True"]:
    parse(c)


def fresh():
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def seg_of(t):
    ptr = t.data_ptr()
    for s in torch.cuda.memory._snapshot()["segments"]:
        if s["address"] <= ptr < s["address"] + s["total_size"]:
            return {"segment_size": s["total_size"], "block": [b["size"] for b in s["blocks"] if b["address"] == ptr][0],
                    "segment_type": s.get("segment_type"), "is_expandable": s.get("is_expandable")}
    return None


def fig(name, f):
    try:
        out["figures"][name] = f()
    except BaseException as e:  # noqa
        out["figures"][name] = {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-600:]}
    finally:
        setconf("")
        fresh()


def unsplit_reuse(conf, big_mb, req_mb):
    # An oversize free block of big_mb: does a req_mb request take it whole?
    setconf(conf)
    fresh()
    a = torch.empty(big_mb * MiB, dtype=torch.uint8, device="cuda")
    pa = a.data_ptr()
    del a
    b = torch.empty(req_mb * MiB, dtype=torch.uint8, device="cuda")
    r = {"conf": conf, "same_address": b.data_ptr() == pa, "block": seg_of(b)["block"]}
    del b
    return r


fig("rounding_large_segment_40", lambda: unsplit_reuse("large_segment_size_mb:40,max_split_size_mb:100", 200, 165))
fig("rounding_default", lambda: unsplit_reuse("max_split_size_mb:100", 200, 165))
fig("rounding_max_non_split_100", lambda: unsplit_reuse("max_split_size_mb:100,max_non_split_rounding_mb:100", 200, 120))
fig("max_split_100_small_request", lambda: unsplit_reuse("max_split_size_mb:100", 200, 50))


def seg_for(conf, nbytes):
    setconf(conf)
    fresh()
    t = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    r = {"conf": conf, "request": nbytes, **seg_of(t)}
    del t
    return r


fig("segment_large_40", lambda: seg_for("large_segment_size_mb:40", 12 * MiB))
fig("segment_default", lambda: seg_for("", 12 * MiB))
fig("expandable_page_large_40", lambda: seg_for("expandable_segments:True,large_segment_size_mb:40", 12 * MiB))
fig("roundup_256_1_gt_8", lambda: seg_for("roundup_power2_divisions:[256:1,>:8]", 600000000))


def fraction_fig():
    setconf("per_process_memory_fraction:0.5")
    total = torch.cuda.get_device_properties(0).total_memory
    r = {"get_fraction": torch.cuda.memory.get_per_process_memory_fraction(0)}
    try:
        t = torch.empty(int(total * 0.6), dtype=torch.uint8, device="cuda")
        r["alloc_0.6_total"] = "succeeded"
        del t
    except torch.OutOfMemoryError as e:
        r["alloc_0.6_total"] = "oom"
    setconf("per_process_memory_fraction:1.0")
    torch.cuda.set_per_process_memory_fraction(1.0)
    return r


fig("per_process_memory_fraction", fraction_fig)


def gc_fig():
    # garbage_collection_threshold with a fraction: cached blocks are freed when reserved passes it.
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(0.01)  # ~1.4 GiB on an H200
    setconf("garbage_collection_threshold:0.5")
    fresh()
    a = [torch.empty(300 * MiB, dtype=torch.uint8, device="cuda") for _ in range(3)]
    del a
    before = torch.cuda.memory_reserved()
    b = torch.empty(400 * MiB, dtype=torch.uint8, device="cuda")
    after = torch.cuda.memory_reserved()
    del b
    torch.cuda.set_per_process_memory_fraction(1.0)
    return {"allowed": int(total * 0.01), "reserved_before": before, "reserved_after": after}


fig("garbage_collection_threshold", gc_fig)


def record_stream_reuse(flag):
    setconf(f"graph_capture_record_stream_reuse:{flag}")
    fresh()
    side = torch.cuda.Stream()
    g = torch.cuda.CUDAGraph()
    res = {}
    n = 8 * MiB
    x = torch.ones(16, device="cuda")
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        a = torch.empty(n, dtype=torch.uint8, device="cuda")
        pa = a.data_ptr()
        cs = torch.cuda.current_stream()
        side.wait_stream(cs)
        with torch.cuda.stream(side):
            a.add_(1)
        a.record_stream(side)
        cs.wait_stream(side)
        del a
        c = torch.empty(n, dtype=torch.uint8, device="cuda")
        res["reused_during_capture"] = c.data_ptr() == pa
        del c
    torch.cuda.synchronize()
    del g
    return res


fig("graph_capture_record_stream_reuse_True", lambda: record_stream_reuse("True"))
fig("graph_capture_record_stream_reuse_False", lambda: record_stream_reuse("False"))


def release_lock_fig():
    setconf("release_lock_on_cudamalloc:True")
    fresh()
    t = torch.empty(12 * MiB, dtype=torch.uint8, device="cuda")
    r = seg_of(t)
    del t
    return r


fig("release_lock_on_cudamalloc", release_lock_fig)


def pinned_fig(conf):
    setconf(conf)
    t = torch.empty(3 * MiB, dtype=torch.uint8, pin_memory=True)
    r = {"conf": conf, "pinned": t.is_pinned(), "device_reserved": torch.cuda.memory_reserved()}
    del t
    return r


fig("pinned_use_cuda_host_register", lambda: pinned_fig("pinned_use_cuda_host_register:True,pinned_num_register_threads:8"))
fig("pinned_use_background_threads", lambda: pinned_fig("pinned_use_background_threads:True"))
fig("pinned_reserve_segment_size_mb", lambda: pinned_fig("pinned_reserve_segment_size_mb:64"))

json.dump(out, open(sys.argv[1], "w"), indent=1)
print("probe_2026 done", len(out["parse"]), "parse cases,", len(out["figures"]), "figures")
