"""fully_shard that turns a module's own parameters (those no earlier call took) into DTensor-like
parameters sharded on dim 0 over the world."""

from dataclasses import dataclass

from .. import distributed_c10d


@dataclass
class MixedPrecisionPolicy:
    param_dtype: object = None
    reduce_dtype: object = None
    output_dtype: object = None
    cast_forward_inputs: bool = True


class _Local:
    def __init__(self, shape):
        self.shape = shape


class DTensorParam:
    def __init__(self, param, world):
        self.shape, self.dtype, self.requires_grad = param.shape, param.dtype, param.requires_grad
        rows = -(-param.shape[0] // world) if param.shape else 1
        self._local = _Local((rows,) + tuple(param.shape[1:]))

    def to_local(self):
        return self._local


def fully_shard(module, *, mesh=None, reshard_after_forward=True, mp_policy=MixedPrecisionPolicy()):
    world = distributed_c10d.get_world_size()
    for mod in (module if isinstance(module, list) else [module]):
        for owner, name, p in mod._all_params():
            if not isinstance(p, DTensorParam):
                owner._params[name] = DTensorParam(p, world)
        mod.__class__ = type("FSDP" + type(mod).__name__, (type(mod),), {})
    return module


fully_shard.state = "the contract's state accessor"
