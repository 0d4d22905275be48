"""Real PyTorch programs for the PrivateUse1 bridge (tinytorch.torch_backend): each function builds its model on the
CPU with a fixed seed, moves it to ``device``, trains a few steps and returns what the test compares with the same
program on torch's CPU (losses, gradient norms, generated tokens). Only the device string differs between runs."""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


def _batches(n, shape, classes, seed):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(shape, generator=g), torch.randint(0, classes, (shape[0],), generator=g)) for _ in range(n)]


def mlp(device, optimizer="sgd", steps=5):
    """784-64-32-10 MLP, cross entropy; SGD with momentum or Adam (foreach, the default on an accelerator)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(784, 64), nn.ReLU(), nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9) if optimizer == "sgd" else \
        torch.optim.Adam(model.parameters(), lr=1e-3)
    losses = []
    for x, y in _batches(steps, (16, 784), 10, 1):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "weight": model[0].weight.detach().cpu()}


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 5, padding=2)
        self.bn1 = nn.BatchNorm2d(6)
        self.c2 = nn.Conv2d(6, 16, 5)
        self.bn2 = nn.BatchNorm2d(16)
        self.f1 = nn.Linear(16 * 5 * 5, 60)
        self.f2 = nn.Linear(60, 10)

    def forward(self, x):
        x = F.max_pool2d(F.gelu(self.bn1(self.c1(x))), 2)
        x = F.avg_pool2d(F.gelu(self.bn2(self.c2(x))), 2)
        return self.f2(F.gelu(self.f1(x.flatten(1))))


def lenet(device, steps=4):
    """LeNet-5 with BatchNorm, GELU, max and average pooling; label-smoothed cross entropy; AdamW; then eval."""
    torch.manual_seed(0)
    model = LeNet().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.05)
    losses = []
    for x, y in _batches(steps, (8, 1, 28, 28), 10, 2):
        x, y = x.to(device), y.to(device)
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        x, _ = _batches(1, (4, 1, 28, 28), 10, 3)[0]
        out = model(x.to(device)).cpu()
    return {"losses": losses, "eval": out, "running_var": model.bn2.running_var.cpu()}


# ---- nanoGPT's model.py (Karpathy), as written there, minus the pretrained loader -------------------------------

class LayerNorm(nn.Module):
    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                                           is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


@dataclass
class GPTConfig:
    block_size: int = 32
    vocab_size: int = 65
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32
    dropout: float = 0.0
    bias: bool = True


class GPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=LayerNorm(config.n_embd, bias=config.bias)))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        x = self.transformer.ln_f(x)
        if targets is not None:
            logits = self.lm_head(x)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        else:
            logits = self.lm_head(x[:, [-1], :])
            loss = None
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas, fused):
        param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
        decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
        nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
        optim_groups = [{'params': decay_params, 'weight_decay': weight_decay},
                        {'params': nodecay_params, 'weight_decay': 0.0}]
        return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, fused=fused)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float('Inf')
            idx_next = torch.argmax(logits, dim=-1, keepdim=True)  # greedy, so devices can be compared
            idx = torch.cat((idx, idx_next), dim=1)
        return idx


def nanogpt(device, fused=False, steps=4):
    """nanoGPT's GPT: tied embedding, AdamW (foreach, or fused), clip_grad_norm_, then greedy generation."""
    torch.manual_seed(0)
    model = GPT(GPTConfig()).to(device)
    assert model.transformer.wte.weight is model.lm_head.weight
    opt = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), fused)
    g = torch.Generator().manual_seed(4)
    losses, norms = [], []
    for _ in range(steps):
        x = torch.randint(0, 65, (4, 32), generator=g)
        y = torch.roll(x, -1, 1)
        _, loss = model(x.to(device), y.to(device))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item())
        opt.step()
        losses.append(loss.item())
    model.eval()
    tokens = model.generate(torch.zeros((1, 1), dtype=torch.long, device=device), 12, top_k=10)
    return {"losses": losses, "norms": norms, "tokens": tokens.cpu().tolist(),
            "tied": model.transformer.wte.weight is model.lm_head.weight}


# ---- Hugging Face transformers ------------------------------------------------------------------------------------

def hf_gpt2(device, steps=2):
    """transformers' GPT-2 (random init, small config, eager attention): loss, gradients, AdamW, greedy generate."""
    from ecosystem._common import prepare_reference
    prepare_reference()  # transformers imports torchvision when it is installed (the ecosystem tests install it)
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=97, n_positions=32, n_embd=32, n_layer=2, n_head=2, resid_pdrop=0.0, bos_token_id=0, eos_token_id=0,
                     embd_pdrop=0.0, attn_pdrop=0.0, attn_implementation="eager")
    model = GPT2LMHeadModel(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(5)
    losses, grads = [], []
    for _ in range(steps):
        ids = torch.randint(0, 97, (2, 16), generator=g).to(device)
        out = model(input_ids=ids, labels=ids)
        opt.zero_grad()
        out.loss.backward()
        grads.append(model.transformer.h[0].attn.c_attn.weight.grad.norm().item())
        opt.step()
        losses.append(out.loss.item())
    model.eval()
    prompt = torch.tensor([[1, 2, 3]], device=device)
    gen = model.generate(prompt, max_new_tokens=8, do_sample=False, pad_token_id=0)
    return {"losses": losses, "grads": grads, "tokens": gen.cpu().tolist(),
            "tied": model.lm_head.weight is model.transformer.wte.weight}


def hf_bert(device, steps=2):
    """transformers' BERT for masked LM (random init, small config): loss, gradients, an AdamW step."""
    from ecosystem._common import prepare_reference
    prepare_reference()
    from transformers import BertConfig, BertForMaskedLM
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=101, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=32, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0, attn_implementation="eager")
    model = BertForMaskedLM(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(6)
    losses, grads = [], []
    for _ in range(steps):
        ids = torch.randint(0, 101, (2, 12), generator=g)
        labels = torch.where(torch.rand(ids.shape, generator=g) < 0.3, ids, torch.full_like(ids, -100))
        mask = torch.ones_like(ids)
        mask[1, 9:] = 0
        out = model(input_ids=ids.to(device), attention_mask=mask.to(device), labels=labels.to(device))
        opt.zero_grad()
        out.loss.backward()
        grads.append(model.bert.encoder.layer[0].attention.self.query.weight.grad.norm().item())
        opt.step()
        losses.append(out.loss.item())
    return {"losses": losses, "grads": grads}


class UNetBlock(nn.Module):
    """A Stable-Diffusion-style block: ResNet block (GroupNorm, SiLU, conv, time embedding), self-attention over
    the pixels (GroupNorm, scaled_dot_product_attention), nearest upsampling and a conv."""

    def __init__(self, ch=32, temb=16):
        super().__init__()
        self.norm1 = nn.GroupNorm(8, ch)
        self.conv1 = nn.Conv2d(ch, ch, 3, padding=1)
        self.temb = nn.Linear(temb, ch)
        self.norm2 = nn.GroupNorm(8, ch)
        self.conv2 = nn.Conv2d(ch, ch, 3, padding=1)
        self.norm_a = nn.GroupNorm(8, ch)
        self.qkv = nn.Conv2d(ch, 3 * ch, 1)
        self.proj = nn.Conv2d(ch, ch, 1)
        self.up = nn.Conv2d(ch, ch, 3, padding=1)
        self.heads = 2

    def forward(self, x, t):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(t))[:, :, None, None]
        x = x + self.conv2(F.silu(self.norm2(h)))
        B, C, H, W = x.shape
        q, k, v = self.qkv(self.norm_a(x)).chunk(3, dim=1)
        q, k, v = (z.reshape(B, self.heads, C // self.heads, H * W).transpose(-1, -2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v).transpose(-1, -2).reshape(B, C, H, W)
        x = x + self.proj(a)
        return self.up(F.interpolate(x, scale_factor=2.0, mode="nearest"))


def unet_block(device, steps=3):
    torch.manual_seed(0)
    model = UNetBlock().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(7)
    losses = []
    for _ in range(steps):
        x = torch.randn(2, 32, 8, 8, generator=g).to(device)
        t = torch.randn(2, 16, generator=g).to(device)
        target = torch.randn(2, 32, 16, 16, generator=g).to(device)
        loss = F.mse_loss(model(x, t), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses}
