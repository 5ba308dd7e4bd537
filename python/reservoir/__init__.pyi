# Type stub of the package: what `import reservoir` gives (the module loads reservoir.api lazily,
# through a module-level __getattr__ that type checkers cannot follow).
from types import ModuleType

from ._errors import GateFailed as GateFailed
from ._errors import GateUndecided as GateUndecided
from ._errors import NothingToReplay as NothingToReplay
from ._errors import TraceError as TraceError
from ._errors import TraceFileNotFoundError as TraceFileNotFoundError
from .api import Trace as Trace
from .api import check as check
from .api import gate as gate
from .api import load as load
from .api import load_dir as load_dir
from .api import report as report
from .api import scale as scale
from .api import sweep as sweep
from .api import whatif as whatif

__version__: str
capture: ModuleType
__all__: list[str]
