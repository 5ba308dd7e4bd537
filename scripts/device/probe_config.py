"""Probe torch's PYTORCH_CUDA_ALLOC_CONF parser: for each string, the resulting
allocator_settings or the exception text. Also round_size under divisions."""
import json, sys, torch
out = {"torch": torch.__version__, "cases": []}
cases = [
 "", "expandable_segments:True", "expandable_segments:False", "max_split_size_mb:128", "max_split_size_mb:20",
 "max_split_size_mb:19", "max_split_size_mb:abc", "garbage_collection_threshold:0.6", "garbage_collection_threshold:1.0",
 "garbage_collection_threshold:0", "roundup_power2_divisions:4", "roundup_power2_divisions:3", "roundup_power2_divisions:0",
 "roundup_power2_divisions:[256:1,512:2,>:8]", "roundup_power2_divisions:[64:8,256:4,1024:4,>:1]",
 "roundup_power2_divisions:[1:4]", "roundup_power2_divisions:[>:4]", "roundup_power2_divisions:[128:4,>:8]",
 "roundup_power2_divisions:[100:4]", "roundup_power2_divisions:[256:3]", "roundup_power2_divisions:[256:1,512:2",
 "max_split_size_mb:128,garbage_collection_threshold:0.5", "max_split_size_mb:128:garbage_collection_threshold:0.5",
 "max_split_size_mb 128", "max_split_size_mb=128", "foo:1", "max_split_size_mb", "max_split_size_mb:", " expandable_segments : True ",
 "expandable_segments:true", "max_non_split_rounding_mb:40", "max_non_split_rounding_mb:10", "large_segment_size_mb:40",
 "large_segment_size_mb:8", "release_lock_on_cudamalloc:True", "pinned_num_register_threads:4", "backend:native",
 "garbage_collection_threshold:0.6,max_split_size_mb:200,roundup_power2_divisions:[512:4,>:2]",
 "per_process_memory_fraction:0.5", "max_split_size_mb:128,,expandable_segments:True", "max_split_size_mb:-1",
 "max_split_size_mb:1e3", "garbage_collection_threshold:.7", "garbage_collection_threshold:0.7x",
 "roundup_power2_divisions:[]", "expandable_segments:True,expandable_segments:False",
]
for c in cases:
    r = {"conf": c}
    try:
        torch.cuda.memory._set_allocator_settings(c)
        s = torch.cuda.memory._snapshot()["allocator_settings"]
        r["settings"] = {k: v for k, v in s.items()}
    except BaseException as e:  # noqa
        r["error"] = f"{type(e).__name__}: {e}"
    out["cases"].append(r)
torch.cuda.memory._set_allocator_settings("")
# round_size probe: allocate sizes under divisions and read the block sizes
sizes = [1200, 513, 1048577, 1500000, 2500000, 5000000, 12345678, 100000000, 600000000, 1 << 30, (1 << 30) + 1, 3000000000]
probes = {}
for conf in ["roundup_power2_divisions:4", "roundup_power2_divisions:[256:1,512:2,>:8]", "roundup_power2_divisions:[1:4,>:8]"]:
    torch.cuda.memory._set_allocator_settings(conf)
    res = []
    for n in sizes:
        torch.cuda.memory._record_memory_history(max_entries=100000)
        t = torch.empty(n, dtype=torch.uint8, device="cuda")
        snap = torch.cuda.memory._snapshot()
        ptr = t.data_ptr()
        bs = [b["size"] for s in snap["segments"] for b in s["blocks"] if b["address"] == ptr and b["state"] == "active_allocated"]
        res.append([n, bs[0] if bs else None])
        del t
        torch.cuda.empty_cache()
        torch.cuda.memory._record_memory_history(enabled=None)
    probes[conf] = res
torch.cuda.memory._set_allocator_settings("")
out["round_size"] = probes
out["total_memory"] = torch.cuda.get_device_properties(0).total_memory
json.dump(out, open(sys.argv[1], "w"), indent=1)
print("probe done", len(out["cases"]))
