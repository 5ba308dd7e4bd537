"""One rank of a W-rank job in one process: PyTorch's fake process group.

`torch.distributed.init_process_group(...)` (whatever backend the script asks for) becomes
`init_process_group("fake", store=FakeStore(), rank=R, world_size=W)`: collectives move no data
but every tensor has the size it has on rank R of the real job. Object collectives pickle into
tensors that a fake group never fills, so they are emulated here for one participant (see
`ObjectCollectives`); what cannot be emulated stops with a CaptureError that says what.
"""

import os
import pickle
from typing import MutableMapping

from .errors import CaptureError
from .patching import Patches, try_import

DEFAULT_MASTER_ADDR = "127.0.0.1"
DEFAULT_MASTER_PORT = "29500"


def job_environment(world_size: int, rank: int, environ: MutableMapping[str, str]) -> None:
    """The variables torchrun sets, for rank `rank` of `world_size` on one local GPU."""
    if world_size < 1:
        raise CaptureError(f"--world-size must be at least 1 (got {world_size})")
    if not 0 <= rank < world_size:
        raise CaptureError(f"--rank must be in [0, {world_size - 1}] for a world of {world_size} (got {rank})")
    environ["RANK"] = str(rank)
    environ["WORLD_SIZE"] = str(world_size)
    environ["LOCAL_RANK"] = "0"  # the script's torch.cuda.set_device(LOCAL_RANK) lands on the one GPU
    environ["LOCAL_WORLD_SIZE"] = "1"
    environ["GROUP_RANK"] = str(rank)
    environ.setdefault("MASTER_ADDR", DEFAULT_MASTER_ADDR)
    environ.setdefault("MASTER_PORT", DEFAULT_MASTER_PORT)


def fake_store():
    fake_pg = try_import("torch.testing._internal.distributed.fake_pg")  # importing it registers "fake"
    if fake_pg is None or not hasattr(fake_pg, "FakeStore"):
        raise CaptureError(
            "this torch has no fake process group (torch.testing._internal.distributed.fake_pg.FakeStore): "
            "recording one rank of a larger job needs a torch that has it (2.1 or newer)")
    return fake_pg.FakeStore()


_KEPT_INIT_OPTIONS = ("timeout", "group_name")


def _backend_argument(args, kwargs):
    if "backend" in kwargs:
        return kwargs["backend"]
    return args[0] if args else None


class FakeGroup:
    """Installs the redirection; `session` receives notes (what was emulated) and the backend
    the script asked for."""

    def __init__(self, world_size: int, rank: int, session) -> None:
        self.world_size, self.rank, self.session = world_size, rank, session

    def install(self, patches: Patches) -> None:
        dist = try_import("torch.distributed")
        if dist is None or not dist.is_available():
            raise CaptureError("this torch was built without torch.distributed: the fake process group needs it")
        c10d = try_import("torch.distributed.distributed_c10d")
        mesh = try_import("torch.distributed.device_mesh")
        fake_store()  # fail early, before the script runs, if the fake group is missing
        owners = [dist, c10d, mesh]
        init = getattr(c10d, "init_process_group", None) or dist.init_process_group
        patches.replace_everywhere(owners, "init_process_group", self._init_process_group(init))
        new_group = getattr(c10d, "new_group", None) or dist.new_group
        patches.replace_everywhere([dist, c10d], "new_group", self._new_group(new_group))
        ObjectCollectives(self.session, dist).install(patches, [dist, c10d])

    def _init_process_group(self, original):
        kit = self

        def init_process_group(*args, **kwargs):
            kit.session.requested_backend = str(_backend_argument(args, kwargs))
            kept = {k: v for k, v in kwargs.items() if k in _KEPT_INIT_OPTIONS}
            return original("fake", store=fake_store(), rank=kit.rank, world_size=kit.world_size, **kept)

        return init_process_group

    def _new_group(self, original):
        kit = self

        def new_group(*args, **kwargs):
            args = list(args)
            if len(args) > 2:
                args[2:4] = [None] * len(args[2:4])  # backend, pg_options: the fake group's own
            if kwargs.get("backend") not in (None, "fake"):
                kit.session.note("new_group", f"backend {kwargs['backend']!r} became the fake group's")
            kwargs.pop("backend", None)
            kwargs.pop("pg_options", None)
            return original(*args, **kwargs)

        return new_group


def _copy(obj):
    return pickle.loads(pickle.dumps(obj))  # what a receiving rank gets: an unpickled copy


class ObjectCollectives:
    """all_gather_object / gather_object / broadcast_object_list / scatter_object_list for one
    participant. Gathers assume the program is symmetric (every rank contributes an object like
    this rank's); a broadcast or scatter from another rank cannot be known and stops the run
    unless the receiving list already holds values (then they are kept)."""

    def __init__(self, session, dist) -> None:
        self.session, self.dist = session, dist

    def install(self, patches: Patches, owners) -> None:
        for name in ("all_gather_object", "gather_object", "broadcast_object_list", "scatter_object_list"):
            patches.replace_everywhere(owners, name, getattr(self, name))

    def _me(self, group, group_rank_given: bool) -> int:
        return self.dist.get_rank(group) if group_rank_given else self.dist.get_rank()

    def _unknown(self, what: str, src: int) -> CaptureError:
        return CaptureError(
            f"dist.{what} from rank {src}: this process plays rank {self.dist.get_rank()} only and cannot know "
            f"what rank {src} sends. Capture rank {src} instead (--rank {src}), or compute the value locally.")

    def all_gather_object(self, object_list, obj, group=None):
        self.session.note("all_gather_object", "every rank's object taken to be this rank's")
        for i in range(len(object_list)):
            object_list[i] = _copy(obj)

    def gather_object(self, obj, object_gather_list=None, dst=None, group=None, group_dst=None):
        root = group_dst if group_dst is not None else (0 if dst is None else dst)
        if self._me(group, group_dst is not None) != root:
            return
        self.session.note("gather_object", "every rank's object taken to be this rank's")
        for i in range(len(object_gather_list or [])):
            object_gather_list[i] = _copy(obj)

    def broadcast_object_list(self, object_list, src=None, group=None, device=None, group_src=None):
        root = group_src if group_src is not None else (0 if src is None else src)
        if self._me(group, group_src is not None) == root:
            return
        if all(o is None for o in object_list):
            raise self._unknown("broadcast_object_list", root)
        self.session.note("broadcast_object_list", "the receiving list's own values were kept")

    def scatter_object_list(self, scatter_object_output_list, scatter_object_input_list=None, src=None,
                            group=None, group_src=None):
        root = group_src if group_src is not None else (0 if src is None else src)
        me = self._me(group, group_src is not None)
        if me != root:
            raise self._unknown("scatter_object_list", root)
        scatter_object_output_list[0] = _copy(scatter_object_input_list[self.dist.get_rank(group)])
