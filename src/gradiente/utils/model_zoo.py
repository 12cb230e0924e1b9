"""``torch.utils.model_zoo``, the old name of ``torch.hub``'s weight download: ``load_url`` (and ``tqdm``)."""
from ..hub import load_state_dict_from_url as load_url
from ..hub import tqdm

__all__ = ["load_url", "tqdm"]
