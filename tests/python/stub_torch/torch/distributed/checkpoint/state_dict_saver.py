import json
import os
import warnings

from . import default_planner
from .. import distributed_c10d

calls = []


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None, process_group=None, no_dist=False):
    calls.append({"no_dist": no_dist, "process_group": process_group})
    if no_dist:  # as torch words it
        warnings.warn("torch.distributed is disabled, unavailable or uninitialized, assuming the intent is to save "
                      "in a single process.")
    else:
        distributed_c10d.gather_object(None)  # garbage on a fake group
    if not default_planner._validate_global_plan([], None):
        raise ValueError("Failed to validate global plan")
    os.makedirs(checkpoint_id, exist_ok=True)
    with open(os.path.join(checkpoint_id, ".metadata"), "w") as f:
        json.dump(sorted(state_dict), f)


def async_save(state_dict, *, checkpoint_id=None, process_group=None, **kw):
    raise RuntimeError("stub: async_save needs a real process group")
