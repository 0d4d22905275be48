"""safetensors: save_file / load_file of several dtypes, the shared-memory refusal, and safe_open slices."""
import os
import tempfile

import torch
from _common import report

from safetensors import safe_open
from safetensors.torch import load_file, save_file

torch.manual_seed(0)
tensors = {"w": torch.randn(4, 3), "h": torch.randn(5).half(), "i": torch.arange(6).reshape(2, 3),
           "b": torch.tensor([True, False]), "bf": torch.randn(3).to(torch.bfloat16)}
result = {}
with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "t.safetensors")
    save_file(tensors, path, metadata={"format": "pt"})
    back = load_file(path)
    result["equal"] = {k: bool(torch.equal(back[k], v)) for k, v in tensors.items()}
    result["dtypes"] = {k: str(v.dtype) for k, v in back.items()}
    with safe_open(path, framework="pt") as f:
        result["keys"] = sorted(f.keys())
        result["slice"] = f.get_slice("w")[1:3].tolist()
        result["metadata"] = f.metadata()
    w = torch.randn(4, 4)
    try:
        save_file({"a": w, "b": w[1:]}, os.path.join(d, "shared.safetensors"))
        result["shared"] = "saved"
    except RuntimeError as e:
        result["shared"] = str(e).split("\n")[0]
    result["size"] = os.path.getsize(path)
report(result)
