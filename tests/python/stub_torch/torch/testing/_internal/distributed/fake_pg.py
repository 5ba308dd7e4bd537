from torch.distributed import distributed_c10d

distributed_c10d._registered.add("fake")  # importing it registers the backend, as in torch


class FakeStore:
    pass
