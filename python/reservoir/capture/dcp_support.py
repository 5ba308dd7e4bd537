"""torch.distributed.checkpoint (DCP) for the one rank a capture plays.

DCP plans a save or load across ranks with object collectives (gather the local plans, scatter
the global one), which return garbage on a fake group. The kit runs `dcp.save` / `dcp.load` with
`no_dist=True`: this rank plans alone, writes its own shards and the metadata, and reads back
what it wrote. A single rank's checkpoint covers only its shards of each DTensor, so the
planner's check that the chunks fill every tensor is relaxed. Load a checkpoint with the same
--world-size and --rank that saved it.

Not emulated: in a real NCCL run the object collectives copy pickles into CUDA tensors
(allocations this local plan does not make), docs/capture.md.

With no_dist=True torch warns "torch.distributed is disabled, unavailable or uninitialized,
assuming the intent is to save (load) in a single process" at every save and load. That is what
the kit asks for, so the warning is silenced and explained once per process instead.
"""

# torch's warning when DCP plans without collectives (save and load word it alike).
SINGLE_PROCESS_WARNING = r"torch\.distributed is disabled, unavailable or uninitialized"
_explained = False


def _explain_once() -> None:
    global _explained
    if not _explained:
        _explained = True
        print("reservoir.capture: dcp.save / dcp.load run on this rank alone (no_dist=True), so torch's warning "
              "'torch.distributed is disabled, unavailable or uninitialized, assuming ... a single process' is "
              "expected here; it is not shown again", file=sys.stderr)


import concurrent.futures
import functools
import inspect
import sys
import warnings

from .patching import Patches, try_import


def _accepts(fn, name: str) -> bool:
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


class DcpSupport:
    def __init__(self, session) -> None:
        self.session = session

    def install(self, patches: Patches) -> None:
        dcp = try_import("torch.distributed.checkpoint")
        if dcp is None:
            return
        saver = try_import("torch.distributed.checkpoint.state_dict_saver")
        loader = try_import("torch.distributed.checkpoint.state_dict_loader")
        for name, module in (("save", saver), ("load", loader)):
            original = getattr(module, name, None) or getattr(dcp, name, None)
            if original is not None:
                patches.replace_everywhere([dcp, module], name, self._one_rank(original, f"dcp.{name}"))
        save = getattr(dcp, "save", None)
        if save is not None and hasattr(dcp, "async_save"):
            patches.replace_everywhere([dcp, saver], "async_save", self._async_save(save))
        planner = try_import("torch.distributed.checkpoint.default_planner")
        patches.replace(planner, "_validate_global_plan", lambda original: _validate_one_rank(original))
        utils = try_import("torch.distributed.checkpoint.utils")
        if save is not None and not _accepts(save, "no_dist"):
            self._local_dist_wrapper(patches, utils)

    def _one_rank(self, original, what: str):
        session = self.session
        has_no_dist = _accepts(original, "no_dist")

        @functools.wraps(original)
        def one_rank(*args, **kwargs):
            session.note(what, "planned by this rank alone (no_dist=True)")
            kwargs.pop("process_group", None)
            if has_no_dist:
                kwargs["no_dist"] = True
            _explain_once()
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message=SINGLE_PROCESS_WARNING)
                return original(*args, **kwargs)

        return one_rank

    def _async_save(self, save):
        session = self.session

        @functools.wraps(save)
        def async_save(*args, **kwargs):
            session.note("dcp.async_save", "run as a synchronous save (its CPU staging is not emulated)")
            for option in ("async_checkpointer_type", "async_stager", "no_dist", "process_group"):
                kwargs.pop(option, None)
            future = concurrent.futures.Future()
            future.set_result(save(*args, **kwargs))
            return future

        return async_save

    def _local_dist_wrapper(self, patches: Patches, utils) -> None:
        """A torch whose dcp.save has no `no_dist`: its _DistWrapper runs without collectives."""
        wrapper = getattr(utils, "_DistWrapper", None)
        if wrapper is None:
            return

        def make(original_init):
            def init(self, group, use_dist, coordinator_rank):
                original_init(self, group, False, coordinator_rank)

            return init

        patches.replace(wrapper, "__init__", make)


def _validate_one_rank(original):
    def validate(global_plan, metadata, *args, **kwargs):
        return True  # one rank's shards never fill a DTensor of a larger world

    return validate
