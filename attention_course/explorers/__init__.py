"""Interactive explorers: move the inputs of attention and watch the numbers respond.

Each explorer is an anywidget widget whose ES module (in `js/`) does the
arithmetic in the browser, so it works live in JupyterLab and, mounted from
the same module, in the static book without a kernel. Python supplies the
starting state, computed by the package, and the reference numbers the tests
compare the browser against.

>>> from attention_course.explorers import ScoresExplorer
>>> ScoresExplorer().summary()
'Scores to weights (d_k = 4): weights my 0.064, card 0.782, was 0.048, blocked 0.106; output [0.19, 0.91]'
"""

from .cost import CostExplorer
from .frontier import FrontierExplorer
from .kv_cache import KVCacheExplorer
from .masking import MaskExplorer
from .positions import PositionsExplorer
from .roofline import RooflineExplorer
from .scaling import ScalingExplorer
from .scores import ScoresExplorer
from .todays_models import TodaysModelsExplorer
from .widget import Explorer

EXPLORERS: tuple[type[Explorer], ...] = (
    ScoresExplorer, ScalingExplorer, MaskExplorer, CostExplorer, PositionsExplorer, KVCacheExplorer, RooflineExplorer,
    TodaysModelsExplorer, FrontierExplorer,
)
"""Every explorer that starts from the package's numbers alone (no arguments), in the order of the
playground page (book/explorers.ipynb). The tests read this list. The head view of the legal-summariser
chapter (`head_view.HeadViewExplorer`) needs the pretrained model and is tested with it."""

__all__ = [
    "EXPLORERS", "CostExplorer", "Explorer", "FrontierExplorer", "KVCacheExplorer", "MaskExplorer", "PositionsExplorer", "RooflineExplorer",
    "ScalingExplorer", "ScoresExplorer", "TodaysModelsExplorer",
]
