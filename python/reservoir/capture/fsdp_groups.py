"""The parameters FSDP2's `fully_shard` manages, group by group: the global shapes and dtypes
(a trace carries sizes only) that `reservoir scale` can re-shard for another world size."""

import functools
from typing import Any, Dict, List, Set

from .patching import Patches, try_import

FULLY_SHARD_MODULES = (
    "torch.distributed.fsdp",
    "torch.distributed._composable.fsdp",
    "torch.distributed.fsdp._fully_shard",
    "torch.distributed._composable.fsdp.fully_shard",
)


def _text(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _mesh(mesh: Any) -> Any:
    if mesh is None:
        return None
    return {"shape": [int(s) for s in getattr(mesh, "shape", ())],
            "dim_names": [_text(n) for n in (getattr(mesh, "mesh_dim_names", None) or ())]}


def _policy(policy: Any) -> Any:
    if policy is None:
        return None
    fields = ("param_dtype", "reduce_dtype", "output_dtype", "cast_forward_inputs")
    return {f: _text(getattr(policy, f)) for f in fields if hasattr(policy, f)}


def _local_shape(param: Any) -> Any:
    to_local = getattr(param, "to_local", None)
    if to_local is None:
        return None
    return [int(s) for s in to_local().shape]


class FsdpRecorder:
    def __init__(self) -> None:
        self.groups: List[Dict[str, Any]] = []
        self._modules: List[List[int]] = []  # per group, the ids of its modules
        self._paths: Dict[int, str] = {}  # module id -> path from the outermost module sharded so far
        self._owned: Set[int] = set()  # ids of parameters an earlier fully_shard took

    def install(self, patches: Patches) -> None:
        wrapped: Dict[int, Any] = {}  # one wrapper per distinct fully_shard
        for name in FULLY_SHARD_MODULES:
            module = try_import(name)
            original = getattr(module, "fully_shard", None)
            if not callable(original):  # absent in this torch (a submodule of that name is not callable)
                continue
            wrapper = wrapped.setdefault(id(original), self.wrap(original))
            patches.replace(module, "fully_shard", lambda _original, w=wrapper: w)  # type: ignore[misc]

    def wrap(self, original):
        recorder = self

        @functools.wraps(original)
        def fully_shard(module, *args, **kwargs):
            modules = list(module) if isinstance(module, (list, tuple)) else [module]
            classes = [type(m).__name__ for m in modules]  # fully_shard changes the class
            before = [recorder._candidates(m) for m in modules]
            result = original(module, *args, **kwargs)
            recorder._record(modules, classes, before, kwargs)
            return result

        return fully_shard

    def _candidates(self, module):
        return [(n, [int(s) for s in p.shape], _text(p.dtype), bool(p.requires_grad))
                for n, p in module.named_parameters() if id(p) not in self._owned]

    def _record(self, modules, classes, before, kwargs) -> None:
        params = []
        for position, (m, candidates) in enumerate(zip(modules, before)):
            after = dict(m.named_parameters())
            for name, shape, dtype, requires_grad in candidates:
                p = after.get(name)
                if p is not None:
                    self._owned.add(id(p))
                params.append({"module": position, "name": name, "shape": shape, "dtype": dtype,
                               "requires_grad": requires_grad, "local_shape": _local_shape(p)})
        self._modules.append([id(m) for m in modules])
        known = {i for ids in self._modules for i in ids}
        for m in modules:  # an enclosing module is sharded after its parts: paths from it replace theirs
            for name, sub in m.named_modules():
                if id(sub) in known:
                    self._paths[id(sub)] = name
        self.groups.append({
            "classes": classes,
            "mesh": _mesh(kwargs.get("mesh")),
            "mp_policy": _policy(kwargs.get("mp_policy")),
            "reshard_after_forward": _text(kwargs.get("reshard_after_forward", True)),
            "params": params,
        })

    def report(self) -> List[Dict[str, Any]]:
        """The groups in fully_shard's call order; modules and parameters are named by their path
        from the outermost sharded module (the last call is usually the root, path "")."""
        out = []
        for group, ids in zip(self.groups, self._modules):
            modules = [self._paths.get(i) for i in ids]
            params = []
            for p in group["params"]:
                path = modules[p["module"]]
                named = dict(p, name=f"{path}.{p['name']}" if path else p["name"])
                del named["module"]
                params.append(named)
            out.append(dict(group, modules=modules, params=params))
        return out
