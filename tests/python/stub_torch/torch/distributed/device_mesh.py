from .distributed_c10d import get_world_size, init_process_group, is_initialized


class DeviceMesh:
    def __init__(self, shape, names=None):
        self.shape, self.mesh_dim_names = tuple(shape), names


def init_device_mesh(device_type, mesh_shape, mesh_dim_names=None):
    if not is_initialized():
        init_process_group()  # the module global: what the kit must redirect too
    return DeviceMesh(mesh_shape, mesh_dim_names)
