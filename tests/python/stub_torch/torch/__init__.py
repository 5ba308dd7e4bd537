"""A stub of the few torch APIs the capture kit touches, for tests without a GPU or a modern
torch. Its CUDA allocator is a list of trace events the test scripts append to
(torch.cuda._stub_alloc / _stub_free / _stub_oom)."""

__version__ = "2.99.0+stub"


class _Version:
    cuda = "99.0"


version = _Version()


class device:
    def __init__(self, spec, index=None):
        spec = str(spec)
        self.type, _, idx = spec.partition(":")
        self.index = int(idx) if idx else index


class dtype:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


float32 = dtype("float32")
bfloat16 = dtype("bfloat16")

from . import _C, cuda, optim  # noqa: E402
