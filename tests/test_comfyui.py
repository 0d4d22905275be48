"""The ComfyUI node pack, without ComfyUI: imported as ComfyUI imports custom nodes, each node's contract checked,
each node run on torch tensors under torch.inference_mode() and compared with the same computation in torch."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

import tinytorch as tt
from conftest import torch

PACK = os.path.join(os.path.dirname(__file__), "..", "comfyui_tinytorch")


@pytest.fixture(scope="module")
def pack(tmp_path_factory):
    """Load the pack the way ComfyUI does: a package from a folder inside custom_nodes/."""
    custom = tmp_path_factory.mktemp("custom_nodes")
    dst = custom / "comfyui_tinytorch"
    shutil.copytree(PACK, dst)
    spec = importlib.util.spec_from_file_location("comfyui_tinytorch_under_test", dst / "__init__.py",
                                                  submodule_search_locations=[str(dst)])
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def run(pack, name, **kw):
    node = pack.NODE_CLASS_MAPPINGS[name]()
    with torch.inference_mode():
        out = getattr(node, node.FUNCTION)(**kw)
    res = out["result"] if isinstance(out, dict) else out
    assert isinstance(res, tuple) and len(res) == len(node.RETURN_TYPES)
    return res, out


def image(b=2, h=9, w=7, c=3, seed=0):
    return torch.tensor(np.random.default_rng(seed).random((b, h, w, c), dtype=np.float32))


def test_contract(pack):
    builtin = {"LoadImage", "SaveImage", "ImageInvert", "ImageScale", "KSampler", "VAEDecode", "CLIPTextEncode"}
    assert set(pack.NODE_CLASS_MAPPINGS) == set(pack.NODE_DISPLAY_NAME_MAPPINGS)
    for name, cls in pack.NODE_CLASS_MAPPINGS.items():
        assert name.startswith("TinyTorch") and name not in builtin
        spec = cls.INPUT_TYPES()
        assert set(spec) <= {"required", "optional", "hidden"} and "required" in spec
        for section in spec.values():
            for arg, decl in section.items():
                assert isinstance(decl, tuple) and decl, f"{name}.{arg}"
                kind = decl[0]
                if kind in ("INT", "FLOAT"):
                    opts = decl[1]
                    assert {"default", "min", "max", "step"} <= set(opts), f"{name}.{arg}"
                    assert opts["min"] <= opts["default"] <= opts["max"]
                elif isinstance(kind, list):
                    assert decl[1]["default"] in kind
        assert isinstance(cls.RETURN_TYPES, tuple) and len(cls.RETURN_NAMES) == len(cls.RETURN_TYPES)
        assert callable(getattr(cls, cls.FUNCTION)) and cls.CATEGORY.startswith("tinytorch/")
    assert pack.NODE_CLASS_MAPPINGS["TinyTorchLoss"].OUTPUT_NODE is True


def test_image_tensor_roundtrip_does_not_copy_or_modify(pack):
    img = image()
    before = img.clone()
    (t,), _ = run(pack, "TinyTorchImageToTensor", image=img, device="cpu")
    assert isinstance(t, tt.Tensor) and tuple(t.shape) == tuple(img.shape)
    assert t.data_ptr() == img.data_ptr()  # read through NumPy without a copy
    (back,), _ = run(pack, "TinyTorchTensorToImage", tensor=t * 2, clamp=True)
    assert torch.equal(img, before)
    assert back.dtype == torch.float32 and back.data_ptr() != img.data_ptr()
    assert torch.allclose(back, (img * 2).clamp(0, 1))


def test_conv2d_matches_torch_with_loaded_weights(pack, tmp_path):
    from safetensors.numpy import save_file
    conv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
    save_file({"enc.weight": conv.weight.detach().numpy(), "enc.bias": conv.bias.detach().numpy()},
              str(tmp_path / "w.safetensors"))
    (weights,), _ = run(pack, "TinyTorchLoadWeights", path=str(tmp_path / "w.safetensors"), prefix="enc")
    img = image()
    (out, t), _ = run(pack, "TinyTorchConv2D", image=img, in_channels=3, out_channels=4, kernel_size=3, stride=2,
                      padding=1, bias=True, seed=0, weights=weights)
    with torch.inference_mode():
        expected = conv(img.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
    assert out.shape == expected.shape and torch.allclose(out, expected, atol=1e-5)
    assert isinstance(t, tt.Tensor)
    (again, _), _ = run(pack, "TinyTorchConv2D", image=img, in_channels=3, out_channels=4, kernel_size=3, stride=2,
                        padding=1, bias=True, seed=0)
    (same, _), _ = run(pack, "TinyTorchConv2D", image=img, in_channels=3, out_channels=4, kernel_size=3, stride=2,
                       padding=1, bias=True, seed=0)
    assert torch.equal(again, same)  # the seed fixes the initial weights


def test_load_weights_reads_torch_checkpoints(pack, tmp_path):
    conv = torch.nn.Conv2d(3, 4, 3, padding=1)
    torch.save({"epoch": 3, "state_dict": {"enc." + k: v for k, v in conv.state_dict().items()}}, tmp_path / "c.pth")
    (weights,), _ = run(pack, "TinyTorchLoadWeights", path=str(tmp_path / "c.pth"), prefix="enc")
    assert sorted(weights) == ["bias", "weight"]
    img = image()
    (out, _), _ = run(pack, "TinyTorchConv2D", image=img, in_channels=3, out_channels=4, kernel_size=3, stride=1,
                      padding=1, bias=True, seed=0, weights=weights)
    with torch.inference_mode():
        expected = conv(img.permute(0, 3, 1, 2)).permute(0, 2, 3, 1)
    assert torch.allclose(out, expected, atol=1e-5)
    torch.save([1, 2], tmp_path / "list.pt")
    with pytest.raises(ValueError, match="holds a list, not a state_dict"):
        run(pack, "TinyTorchLoadWeights", path=str(tmp_path / "list.pt"))


def test_linear_over_channels_matches_torch(pack, tmp_path):
    from safetensors.numpy import save_file
    lin = torch.nn.Linear(3, 5)
    save_file({"weight": lin.weight.detach().numpy(), "bias": lin.bias.detach().numpy()}, str(tmp_path / "l.st"))
    (w,), _ = run(pack, "TinyTorchLoadWeights", path=str(tmp_path / "l.st"))
    img = image()
    (t, im), _ = run(pack, "TinyTorchLinear", image=img, in_features=3, out_features=5, bias=True, seed=1, weights=w)
    with torch.inference_mode():
        assert torch.allclose(im, lin(img), atol=1e-5)
    with pytest.raises(ValueError, match="in_features is 4"):
        run(pack, "TinyTorchLinear", image=img, in_features=4, out_features=5, bias=True, seed=1)
    with pytest.raises(ValueError, match="shape"):
        run(pack, "TinyTorchLinear", image=img, in_features=3, out_features=6, bias=True, seed=1, weights=w)


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "gelu", "silu", "leaky_relu", "softmax"])
def test_activation_matches_torch(pack, act):
    img = image() * 4 - 2
    (t, im), _ = run(pack, "TinyTorchActivation", image=img, activation=act, negative_slope=0.2)
    F = torch.nn.functional
    ref = {"relu": F.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh, "gelu": F.gelu, "silu": F.silu,
           "leaky_relu": lambda x: F.leaky_relu(x, 0.2), "softmax": lambda x: F.softmax(x, -1)}[act](img)
    assert torch.allclose(im, ref, atol=1e-6)
    (t2, _), _ = run(pack, "TinyTorchActivation", tensor=t, activation="relu")
    assert isinstance(t2, tt.Tensor)


@pytest.mark.parametrize("loss", ["mse", "mae", "huber", "bce"])
def test_loss_matches_torch_and_shows_value(pack, loss):
    a, b = image(seed=1), image(seed=2)
    (v,), out = run(pack, "TinyTorchLoss", loss_type=loss, prediction_image=a, target_image=b)
    F = torch.nn.functional
    ref = {"mse": F.mse_loss, "mae": F.l1_loss, "huber": F.huber_loss, "bce": F.binary_cross_entropy}[loss](a, b)
    assert isinstance(v, float) and v == pytest.approx(ref.item(), rel=1e-5)
    assert loss in out["ui"]["text"][0]
    with pytest.raises(ValueError, match="must match"):
        run(pack, "TinyTorchLoss", loss_type=loss, prediction_image=a, target_image=image(h=5))


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "minimum"])
def test_tensor_ops_broadcast_like_torch(pack, op):
    a, b = image(), image(b=1, seed=3) + 0.5
    (t, im), _ = run(pack, "TinyTorchTensorOps", operation=op, a_image=a, b_image=b)
    ref = {"add": torch.add, "subtract": torch.sub, "multiply": torch.mul, "divide": torch.div,
           "maximum": torch.maximum, "minimum": torch.minimum}[op](a, b)
    assert torch.allclose(im, ref, atol=1e-6)


def test_tensor_ops_errors_are_value_errors(pack):
    with pytest.raises(ValueError, match=r"do not broadcast: a is \[2, 9, 7, 3\], b is \[2, 5, 7, 3\]"):
        run(pack, "TinyTorchTensorOps", operation="add", a_image=image(), b_image=image(h=5))
    with pytest.raises(ValueError, match="matrix shapes"):
        run(pack, "TinyTorchTensorOps", operation="matmul", a_image=image(), b_image=image())
    (t, _), _ = run(pack, "TinyTorchTensorOps", operation="matmul", a=tt.ones(2, 3), b=tt.ones(3, 4))
    assert t.tolist() == [[3.0] * 4] * 2
    with pytest.raises(ValueError, match="exactly one"):
        run(pack, "TinyTorchTensorOps", operation="add", a_image=image(), a=tt.ones(1), b_image=image())
    with pytest.raises(ValueError, match="channels"):
        run(pack, "TinyTorchConv2D", image=image(c=4), in_channels=3, out_channels=3, kernel_size=3, stride=1,
            padding=1, bias=True, seed=0)
    with pytest.raises(ValueError, match="no file"):
        run(pack, "TinyTorchLoadWeights", path="/nonexistent.safetensors")


def test_fit_learns_the_mapping(pack):
    img = image(b=1, h=12, w=12)
    target = 1 - img
    (out, loss), ui = run(pack, "TinyTorchFit", image=img, target=target, steps=150, learning_rate=0.01,
                          hidden_channels=8, seed=0, device="cpu")
    start = torch.nn.functional.mse_loss(img, target).item()
    assert out.shape == img.shape and loss < 0.05 * start
    assert torch.equal(img, image(b=1, h=12, w=12))  # input untouched


def test_example_workflows_reference_real_nodes(pack):
    builtin = {"LoadImage", "SaveImage", "ImageInvert"}
    for name in ("conv_activation.json", "fit.json"):
        wf = json.load(open(os.path.join(PACK, "workflows", name)))
        for node_id, node in wf.items():
            cls = node["class_type"]
            assert cls in pack.NODE_CLASS_MAPPINGS or cls in builtin, f"{name}: unknown node {cls}"
            if cls in pack.NODE_CLASS_MAPPINGS:
                spec = pack.NODE_CLASS_MAPPINGS[cls].INPUT_TYPES()
                names = set(spec["required"]) | set(spec.get("optional", {}))
                assert set(node["inputs"]) <= names and set(spec["required"]) <= set(node["inputs"]), name


@pytest.mark.skipif(not os.environ.get("COMFYUI_DIR"), reason="COMFYUI_DIR is not set: no ComfyUI checkout to "
                    "run the server integration test against")
def test_comfyui_server_integration(tmp_path):
    comfy = os.environ["COMFYUI_DIR"]
    link = os.path.join(comfy, "custom_nodes", "comfyui_tinytorch")
    if not os.path.exists(link):
        os.symlink(os.path.abspath(PACK), link)
    from PIL import Image
    Image.fromarray((np.random.default_rng(0).random((32, 32, 3)) * 255).astype(np.uint8)).save(
        os.path.join(comfy, "input", "example.png"))
    port = 8199
    proc = subprocess.Popen([sys.executable, "main.py", "--cpu", "--listen", "127.0.0.1", "--port", str(port)],
                            cwd=comfy, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                info = json.load(urllib.request.urlopen(base + "/object_info"))
                break
            except OSError:
                time.sleep(1)
        else:
            pytest.fail("ComfyUI did not start")
        assert "TinyTorchConv2D" in info and "TinyTorchFit" in info
        wf = json.load(open(os.path.join(PACK, "workflows", "conv_activation.json")))
        req = urllib.request.Request(base + "/prompt", data=json.dumps({"prompt": wf}).encode(),
                                     headers={"Content-Type": "application/json"})
        pid = json.load(urllib.request.urlopen(req))["prompt_id"]
        for _ in range(120):
            hist = json.load(urllib.request.urlopen(f"{base}/history/{pid}"))
            if pid in hist:
                assert hist[pid]["status"]["status_str"] == "success"
                break
            time.sleep(1)
        else:
            pytest.fail("the workflow did not finish")
    finally:
        proc.terminate()
