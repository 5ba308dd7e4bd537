from .state_dict_loader import load  # noqa: F401
from .state_dict_saver import async_save, save  # noqa: F401
