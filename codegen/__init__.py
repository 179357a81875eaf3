"""codegen: Gibbs–Appell equations of motion turned into fast compiled dynamics."""
from .appell import GibbsAppellMethod

__all__ = ["GibbsAppellMethod"]
__version__ = "0.1.0"
