"""``torch.utils.model_zoo``: the older home of ``load_url`` (``torch.hub.load_state_dict_from_url``)."""
from ..hub import load_state_dict_from_url as load_url, tqdm  # noqa: F401 (torchvision imports tqdm from here)

__all__ = ["load_url"]
