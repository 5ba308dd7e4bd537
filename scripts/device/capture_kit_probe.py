"""What this torch offers the capture kit: DCP's no_dist, where DCP validates a global plan,
the fake process group, the per-process fraction getter, the OOM observer."""
import inspect

import torch
import torch.distributed.checkpoint as dcp
import torch.distributed.checkpoint.default_planner as planner

print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))
for name in ("save", "load", "async_save"):
    fn = getattr(dcp, name, None)
    print(f"dcp.{name}", inspect.signature(fn) if fn else "absent")
print("default_planner._validate_global_plan", hasattr(planner, "_validate_global_plan"))
src = inspect.getsource(planner.DefaultSavePlanner.create_global_plan)
print("create_global_plan calls _validate_global_plan:", "_validate_global_plan" in src)
from torch.testing._internal.distributed.fake_pg import FakeStore  # noqa: E402,F401

print("fake_pg FakeStore: yes")
print("get_per_process_memory_fraction", hasattr(torch.cuda, "get_per_process_memory_fraction"))
print("_cuda_attach_out_of_memory_observer", hasattr(torch._C, "_cuda_attach_out_of_memory_observer"))
print("_record_memory_history", inspect.signature(torch.cuda.memory._record_memory_history))
