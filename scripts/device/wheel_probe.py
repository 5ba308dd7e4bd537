"""The installed wheel in the same process as torch on the GPU machine (scripts/device/wheel_gpu.sh):
record a small training loop with torch's own history, hand torch.cuda.memory._snapshot() to
reservoir.load() and ask a what-if; the baseline must equal what torch itself reports
(max_memory_reserved, memory_reserved at the end). Run with the wheel's folder on PYTHONPATH.
Usage: python3 wheel_probe.py [torch-first|reservoir-first]"""

import sys

order = sys.argv[1] if len(sys.argv) > 1 else "torch-first"
if order == "reservoir-first":
    import reservoir
    import torch
else:
    import torch
    import reservoir


def phase_one(model, opt):
    for _ in range(3):
        x = torch.randn(64, 2048, device="cuda")
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


def phase_two():
    return [torch.empty(96 << 20, dtype=torch.uint8, device="cuda") for _ in range(4)]


def main():
    print("torch", torch.__version__, "reservoir", reservoir.__file__)
    torch.cuda.memory._record_memory_history(max_entries=200000)
    model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda()
    opt = torch.optim.AdamW(model.parameters())
    phase_one(model, opt)
    kept = phase_two()
    del kept
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    measured = {"max_memory_reserved": torch.cuda.max_memory_reserved(), "memory_reserved": torch.cuda.memory_reserved()}
    trace = reservoir.load(snap, name="wheel_probe")
    print(trace)
    point = "after:wheel_probe.py:phase_one"
    r = trace.whatif(cleanup=[point], probe=[point])
    base, edited = r["baseline"], r["whatif"]
    print("measured by torch:", measured)
    print("baseline peak reserved", base["peak_reserved"], "final reserved", base["final_reserved"])
    print("with empty_cache after phase_one: peak reserved", edited["peak_reserved"], "reserved at the point",
          edited["probes"][point]["reserved"])
    ok = base["peak_reserved"] == measured["max_memory_reserved"] and base["final_reserved"] == measured["memory_reserved"]
    print("baseline equals torch's own figures:", ok)
    check = trace.check()
    print("check exact:", check["exact"])
    return 0 if ok and check["exact"] else 1


if __name__ == "__main__":
    sys.exit(main())
