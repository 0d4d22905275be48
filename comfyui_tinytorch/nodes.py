"""The node classes. Each follows ComfyUI's custom-node contract (INPUT_TYPES, RETURN_TYPES, RETURN_NAMES,
FUNCTION, CATEGORY, OUTPUT_NODE) and calls tinytorch.

Boundary rules: ComfyUI's IMAGE is a torch float32 tensor [B, H, W, C] in 0..1 on the CPU, MASK is
[B, H, W]; nodes run under ``torch.inference_mode()``. Inputs are read through NumPy without a copy
and never modified; every output is a new tensor. ``TINYTORCH_TENSOR`` carries a tinytorch tensor
between tinytorch nodes (images keep the [B, H, W, C] layout), so chains convert only at their ends.
"""
import numpy as np

import tinytorch as tt
from tinytorch.device import _BACKENDS

TENSOR = "TINYTORCH_TENSOR"
STATE = "TINYTORCH_STATE_DICT"
ACTIVATIONS = ["relu", "sigmoid", "tanh", "gelu", "silu", "leaky_relu", "softmax"]
LOSSES = ["mse", "mae", "huber", "bce"]
OPERATIONS = ["add", "subtract", "multiply", "divide", "matmul", "maximum", "minimum"]
MAX_INT = 2 ** 31 - 1


def devices():
    """Device choices offered by the nodes: every registered tinytorch backend (cpu first)."""
    return ["cpu"] + sorted(d for d in _BACKENDS if d not in ("cpu", "meta"))


def to_tt(x, name="input", device="cpu"):
    """A tinytorch tensor for a ComfyUI value: a torch tensor (IMAGE/MASK, no copy on cpu) or a tinytorch one."""
    if isinstance(x, tt.Tensor):
        return x if device is None else x.to(device)
    if hasattr(x, "detach") and hasattr(x, "numpy"):  # a torch tensor
        arr = x.detach().cpu().numpy()
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        t = tt.from_numpy(arr)
        return t if device in (None, "cpu") else t.to(device)
    if isinstance(x, np.ndarray):
        return tt.from_numpy(x)
    raise ValueError(f"{name}: expected an IMAGE, MASK or {TENSOR}, got {type(x).__name__}")


def to_torch(t):
    """A new torch float32 tensor on the CPU from a tinytorch tensor (for IMAGE / MASK outputs)."""
    import torch
    return torch.from_numpy(np.array(t.detach().cpu().float().numpy(), dtype=np.float32, copy=True))


def pick(image, tensor, name):
    """Exactly one of the optional IMAGE / TINYTORCH_TENSOR inputs, as a tinytorch tensor."""
    if (image is None) == (tensor is None):
        raise ValueError(f"{name}: connect exactly one of its 'image' and 'tensor' inputs")
    return to_tt(image if image is not None else tensor, name, device=None)


def as_image(t):
    """The IMAGE output of a result: a torch tensor when it is [B, H, W, C], else None."""
    return to_torch(t) if t.ndim == 4 else None


class _Seeded:
    """Build modules with their own seed without disturbing tinytorch's global generator."""

    def __init__(self, seed):
        self.seed = seed

    def __enter__(self):
        self.state = tt.get_rng_state()
        tt.manual_seed(self.seed)

    def __exit__(self, *a):
        tt.set_rng_state(self.state)


def _load_into(module, weights, name):
    if weights is None:
        return
    own = module.state_dict()
    missing = [k for k in own if k not in weights]
    if missing:
        raise ValueError(f"{name}: the weights lack {missing} (they have {sorted(weights)})")
    for k, v in own.items():
        if tuple(weights[k].shape) != tuple(v.shape):
            raise ValueError(f"{name}: weight '{k}' has shape {list(weights[k].shape)}, the layer needs "
                             f"{list(v.shape)}; set the node's sizes to match the file")
    module.load_state_dict({k: weights[k] for k in own})


class TinyTorchImageToTensor:
    """IMAGE (or MASK) -> TINYTORCH_TENSOR on the chosen device, [B, H, W, C] layout kept."""

    CATEGORY = "tinytorch/convert"
    RETURN_TYPES = (TENSOR,)
    RETURN_NAMES = ("tensor",)
    FUNCTION = "convert"

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"image": ("IMAGE",), "device": (devices(), {"default": "cpu"})}}

    def convert(self, image, device="cpu"):
        return (to_tt(image, "image", device),)


class TinyTorchTensorToImage:
    """TINYTORCH_TENSOR [B, H, W, C] (or [H, W, C]) -> IMAGE, optionally clamped to 0..1."""

    CATEGORY = "tinytorch/convert"
    RETURN_TYPES = ("IMAGE",)
    RETURN_NAMES = ("image",)
    FUNCTION = "convert"

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"tensor": (TENSOR,), "clamp": ("BOOLEAN", {"default": True})}}

    def convert(self, tensor, clamp=True):
        t = tensor
        if t.ndim == 3:
            t = t.unsqueeze(0)
        if t.ndim != 4:
            raise ValueError(f"Tensor to image: expected a [B, H, W, C] tensor, got shape {list(t.shape)}")
        if t.shape[-1] not in (1, 3, 4):
            raise ValueError(f"Tensor to image: the last dim holds channels and must be 1, 3 or 4, got "
                             f"{t.shape[-1]}; add a Linear node to map channels first")
        if clamp:
            t = t.clamp(0.0, 1.0)
        if t.shape[-1] == 1:
            t = t.expand(*t.shape[:-1], 3)
        return (to_torch(t),)


class TinyTorchLinear:
    """A Linear layer over the last dim (an image's channels): [..., in_features] -> [..., out_features]."""

    CATEGORY = "tinytorch/layers"
    RETURN_TYPES = (TENSOR, "IMAGE")
    RETURN_NAMES = ("tensor", "image")
    FUNCTION = "apply"

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"in_features": ("INT", {"default": 3, "min": 1, "max": 65536, "step": 1}),
                             "out_features": ("INT", {"default": 3, "min": 1, "max": 65536, "step": 1}),
                             "bias": ("BOOLEAN", {"default": True}),
                             "seed": ("INT", {"default": 0, "min": 0, "max": MAX_INT, "step": 1})},
                "optional": {"tensor": (TENSOR,), "image": ("IMAGE",), "weights": (STATE,)}}

    def apply(self, in_features, out_features, bias, seed, tensor=None, image=None, weights=None):
        x = pick(image, tensor, "Linear")
        if x.shape[-1] != in_features:
            raise ValueError(f"Linear: in_features is {in_features} but the input's last dim has {x.shape[-1]} "
                             f"(shape {list(x.shape)})")
        with _Seeded(seed):
            layer = tt.nn.Linear(in_features, out_features, bias=bias).to(x.device)
        _load_into(layer, weights, "Linear")
        with tt.no_grad():
            y = layer(x.float())
        return (y, as_image(y))


class TinyTorchConv2D:
    """A Conv2d layer on an IMAGE: [B, H, W, C_in] -> [B, H', W', C_out] (NCHW handled at the boundary)."""

    CATEGORY = "tinytorch/layers"
    RETURN_TYPES = ("IMAGE", TENSOR)
    RETURN_NAMES = ("image", "tensor")
    FUNCTION = "apply"

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"in_channels": ("INT", {"default": 3, "min": 1, "max": 4096, "step": 1}),
                             "out_channels": ("INT", {"default": 3, "min": 1, "max": 4096, "step": 1}),
                             "kernel_size": ("INT", {"default": 3, "min": 1, "max": 63, "step": 1}),
                             "stride": ("INT", {"default": 1, "min": 1, "max": 64, "step": 1}),
                             "padding": ("INT", {"default": 1, "min": 0, "max": 64, "step": 1}),
                             "bias": ("BOOLEAN", {"default": True}),
                             "seed": ("INT", {"default": 0, "min": 0, "max": MAX_INT, "step": 1})},
                "optional": {"image": ("IMAGE",), "tensor": (TENSOR,), "weights": (STATE,)}}

    def apply(self, in_channels, out_channels, kernel_size, stride, padding, bias, seed, image=None, tensor=None,
              weights=None):
        x = pick(image, tensor, "Conv2D")
        if x.ndim != 4:
            raise ValueError(f"Conv2D: expected a [B, H, W, C] image, got shape {list(x.shape)}")
        if x.shape[-1] != in_channels:
            raise ValueError(f"Conv2D: in_channels is {in_channels} but the image has {x.shape[-1]} channels")
        if x.shape[1] + 2 * padding < kernel_size or x.shape[2] + 2 * padding < kernel_size:
            raise ValueError(f"Conv2D: kernel_size {kernel_size} is larger than the padded image "
                             f"({x.shape[1] + 2 * padding}x{x.shape[2] + 2 * padding})")
        with _Seeded(seed):
            conv = tt.nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, bias=bias).to(x.device)
        _load_into(conv, weights, "Conv2D")
        with tt.no_grad():
            y = conv(x.float().permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
        return (to_torch(y), y)


class TinyTorchActivation:
    """relu / sigmoid / tanh / gelu / silu / leaky_relu, or softmax over channels (the last dim)."""

    CATEGORY = "tinytorch/layers"
    RETURN_TYPES = (TENSOR, "IMAGE")
    RETURN_NAMES = ("tensor", "image")
    FUNCTION = "apply"

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"activation": (ACTIVATIONS, {"default": "relu"}),
                             "negative_slope": ("FLOAT", {"default": 0.01, "min": 0.0, "max": 1.0, "step": 0.01})},
                "optional": {"image": ("IMAGE",), "tensor": (TENSOR,)}}

    def apply(self, activation, negative_slope=0.01, image=None, tensor=None):
        x = pick(image, tensor, "Activation").float()
        F = tt.nn.functional
        fns = {"relu": F.relu, "sigmoid": F.sigmoid, "tanh": F.tanh, "gelu": F.gelu, "silu": F.silu,
               "leaky_relu": lambda t: F.leaky_relu(t, negative_slope), "softmax": lambda t: F.softmax(t, -1)}
        if activation not in fns:
            raise ValueError(f"Activation: unknown activation '{activation}' (choose from {ACTIVATIONS})")
        y = fns[activation](x)
        return (y, as_image(y))


class TinyTorchLoss:
    """A loss between prediction and target (same shapes): mse, mae (l1), huber or bce. Shows the value."""

    CATEGORY = "tinytorch/losses"
    RETURN_TYPES = ("FLOAT",)
    RETURN_NAMES = ("loss",)
    FUNCTION = "compute"
    OUTPUT_NODE = True

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"loss_type": (LOSSES, {"default": "mse"})},
                "optional": {"prediction_image": ("IMAGE",), "prediction": (TENSOR,), "target_image": ("IMAGE",),
                             "target": (TENSOR,)}}

    def compute(self, loss_type, prediction_image=None, prediction=None, target_image=None, target=None):
        p = pick(prediction_image, prediction, "Loss (prediction)").float()
        t = pick(target_image, target, "Loss (target)").float().to(p.device)
        if tuple(p.shape) != tuple(t.shape):
            raise ValueError(f"Loss: prediction has shape {list(p.shape)} but target has {list(t.shape)}; "
                             "they must match")
        F = tt.nn.functional
        if loss_type == "mse":
            v = F.mse_loss(p, t)
        elif loss_type == "mae":
            v = F.l1_loss(p, t)
        elif loss_type == "huber":
            v = F.huber_loss(p, t)
        elif loss_type == "bce":
            if p.min().item() < 0 or p.max().item() > 1 or t.min().item() < 0 or t.max().item() > 1:
                raise ValueError("Loss: bce needs prediction and target in 0..1 (add a sigmoid Activation first)")
            v = F.binary_cross_entropy(p, t)
        else:
            raise ValueError(f"Loss: unknown loss_type '{loss_type}' (choose from {LOSSES})")
        value = float(v.item())
        return {"ui": {"text": [f"{loss_type} loss: {value:.6g}"]}, "result": (value,)}


class TinyTorchTensorOps:
    """Two inputs through add / subtract / multiply / divide / matmul / maximum / minimum, with broadcasting."""

    CATEGORY = "tinytorch/ops"
    RETURN_TYPES = (TENSOR, "IMAGE")
    RETURN_NAMES = ("tensor", "image")
    FUNCTION = "apply"

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"operation": (OPERATIONS, {"default": "add"})},
                "optional": {"a_image": ("IMAGE",), "a": (TENSOR,), "b_image": ("IMAGE",), "b": (TENSOR,)}}

    def apply(self, operation, a_image=None, a=None, b_image=None, b=None):
        x = pick(a_image, a, "Tensor ops (a)").float()
        y = pick(b_image, b, "Tensor ops (b)").float().to(x.device)
        fns = {"add": tt.add, "subtract": tt.sub, "multiply": tt.mul, "divide": tt.div, "matmul": tt.matmul,
               "maximum": tt.maximum, "minimum": tt.minimum}
        if operation not in fns:
            raise ValueError(f"Tensor ops: unknown operation '{operation}' (choose from {OPERATIONS})")
        try:
            r = fns[operation](x, y)
        except RuntimeError as e:
            what = "matrix shapes" if operation == "matmul" else "shapes that do not broadcast"
            raise ValueError(f"Tensor ops: cannot {operation} {what}: a is {list(x.shape)}, b is {list(y.shape)} "
                             f"({e})") from None
        return (r, as_image(r))


class TinyTorchLoadWeights:
    """Read a state_dict (keys under ``prefix``) for a Linear or Conv2D node from a .safetensors file or a
    PyTorch checkpoint (.pt / .pth / .ckpt, ``torch.save``'s format, read with ``weights_only`` safety); a
    checkpoint holding ``{"state_dict": ...}`` or ``{"model": ...}`` is looked into."""

    CATEGORY = "tinytorch/io"
    RETURN_TYPES = (STATE,)
    RETURN_NAMES = ("weights",)
    FUNCTION = "load"

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"path": ("STRING", {"default": "weights.safetensors"})},
                "optional": {"prefix": ("STRING", {"default": ""})}}

    def load(self, path, prefix=""):
        import os
        import zipfile
        if not os.path.isfile(path):
            raise ValueError(f"Load weights: no file at {path!r}")
        if zipfile.is_zipfile(path):  # torch.save's format
            try:
                raw = tt.load(path, map_location="cpu")
            except Exception as e:
                raise ValueError(f"Load weights: {path} is not a readable PyTorch checkpoint ({e})") from None
            for key in ("state_dict", "model"):
                if isinstance(raw, dict) and isinstance(raw.get(key), dict):
                    raw = raw[key]
            if not isinstance(raw, dict):
                raise ValueError(f"Load weights: {path} holds a {type(raw).__name__}, not a state_dict")
            raw = {k: v for k, v in raw.items() if isinstance(v, tt.Tensor)}
        else:
            try:
                from safetensors.numpy import load_file
            except ImportError:
                raise ValueError("Load weights: the safetensors package is needed (pip install safetensors)") from None
            raw = {k: tt.tensor(v) for k, v in load_file(path).items()}
        pre = prefix + "." if prefix and not prefix.endswith(".") else prefix
        out = {k[len(pre):]: v.detach() for k, v in raw.items() if k.startswith(pre)}
        if not out:
            raise ValueError(f"Load weights: no tensors under prefix {prefix!r} in {path} (keys: {sorted(raw)})")
        return (out,)


class TinyTorchFit:
    """Train a small conv net (Adam, ``steps`` steps) to map ``image`` to ``target``; returns the fitted
    image and the final MSE loss. Autograd runs inside the ComfyUI graph."""

    CATEGORY = "tinytorch/train"
    RETURN_TYPES = ("IMAGE", "FLOAT")
    RETURN_NAMES = ("image", "loss")
    FUNCTION = "fit"
    OUTPUT_NODE = True

    @classmethod
    def INPUT_TYPES(cls):
        return {"required": {"image": ("IMAGE",), "target": ("IMAGE",),
                             "steps": ("INT", {"default": 200, "min": 1, "max": 100000, "step": 1}),
                             "learning_rate": ("FLOAT", {"default": 0.01, "min": 1e-6, "max": 1.0, "step": 0.001}),
                             "hidden_channels": ("INT", {"default": 16, "min": 1, "max": 256, "step": 1}),
                             "seed": ("INT", {"default": 0, "min": 0, "max": MAX_INT, "step": 1}),
                             "device": (devices(), {"default": "cpu"})}}

    def fit(self, image, target, steps, learning_rate, hidden_channels, seed, device="cpu"):
        x = to_tt(image, "image", device).float().permute(0, 3, 1, 2)
        y = to_tt(target, "target", device).float().permute(0, 3, 1, 2)
        if tuple(x.shape) != tuple(y.shape):
            raise ValueError(f"Fit: image is {list(image.shape)} but target is {list(target.shape)}; they must "
                             "match")
        c = x.shape[1]
        nn = tt.nn
        with _Seeded(seed):
            net = nn.Sequential(nn.Conv2d(c, hidden_channels, 3, padding=1), nn.ReLU(),
                                nn.Conv2d(hidden_channels, hidden_channels, 3, padding=1), nn.ReLU(),
                                nn.Conv2d(hidden_channels, c, 3, padding=1)).to(device)
        opt = tt.optim.Adam(net.parameters(), lr=learning_rate)
        with tt.enable_grad():
            for _ in range(steps):
                loss = tt.nn.functional.mse_loss(net(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
        with tt.no_grad():
            out = net(x)
            final = float(tt.nn.functional.mse_loss(out, y).item())
        img = to_torch(out.clamp(0.0, 1.0).permute(0, 2, 3, 1))
        return {"ui": {"text": [f"final mse: {final:.6g}"]}, "result": (img, final)}


NODE_CLASS_MAPPINGS = {cls.__name__: cls for cls in (
    TinyTorchImageToTensor, TinyTorchTensorToImage, TinyTorchLinear, TinyTorchConv2D, TinyTorchActivation,
    TinyTorchLoss, TinyTorchTensorOps, TinyTorchLoadWeights, TinyTorchFit)}

NODE_DISPLAY_NAME_MAPPINGS = {
    "TinyTorchImageToTensor": "Image to Tensor (tinytorch)",
    "TinyTorchTensorToImage": "Tensor to Image (tinytorch)",
    "TinyTorchLinear": "Linear (tinytorch)",
    "TinyTorchConv2D": "Conv2D (tinytorch)",
    "TinyTorchActivation": "Activation (tinytorch)",
    "TinyTorchLoss": "Loss (tinytorch)",
    "TinyTorchTensorOps": "Tensor Ops (tinytorch)",
    "TinyTorchLoadWeights": "Load Weights (tinytorch)",
    "TinyTorchFit": "Fit Conv Net (tinytorch)",
}
