"""A character-level GPT trained on Tiny Shakespeare (the second main job).

    python examples/gpt.py                  # tinytorch, default config: 4 layers, 4 heads, 128-dim, context 64
    python examples/gpt.py --torch          # the same code on real PyTorch
    python examples/gpt.py --iters 200 --eval-interval 100   # a quick run

Token + position embeddings, pre-LayerNorm transformer blocks with causal self-attention through
``F.scaled_dot_product_attention``, a GELU MLP, weight tying between the token embedding and the output
head, dropout; AdamW with parameter groups (no weight decay on biases, norms and position embeddings),
linear warmup + cosine learning-rate decay, gradient clipping, periodic train/val loss estimates,
checkpointing and sampling with temperature and top-k. Architecture after Radford et al. 2019 (GPT-2) and
Karpathy's nanoGPT; the data set is Tiny Shakespeare (public domain, shipped in data/tinyshakespeare).
"""
import argparse
import hashlib
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "tinyshakespeare", "input.txt")
DATA_MD5 = "6fb458f1232090904fb40fe944165e91"


def build(torch):
    nn = torch.nn
    F = nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self, n_embd, n_head, dropout):
            super().__init__()
            self.n_head = n_head
            self.qkv = nn.Linear(n_embd, 3 * n_embd)
            self.proj = nn.Linear(n_embd, n_embd)
            self.dropout = dropout
            self.resid_drop = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(x).split(C, dim=2)
            q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=self.dropout if self.training else 0.0)
            return self.resid_drop(self.proj(y.transpose(1, 2).contiguous().view(B, T, C)))

    class Block(nn.Module):
        def __init__(self, n_embd, n_head, dropout):
            super().__init__()
            self.ln1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention(n_embd, n_head, dropout)
            self.ln2 = nn.LayerNorm(n_embd)
            self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd),
                                     nn.Dropout(dropout))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd, dropout):
            super().__init__()
            self.block_size = block_size
            self.wte = nn.Embedding(vocab_size, n_embd)
            self.wpe = nn.Embedding(block_size, n_embd)
            self.drop = nn.Dropout(dropout)
            self.blocks = nn.ModuleList([Block(n_embd, n_head, dropout) for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.head = nn.Linear(n_embd, vocab_size, bias=False)
            self.head.weight = self.wte.weight  # weight tying (Press & Wolf 2017)
            self.apply(self._init)
            for name, p in self.named_parameters():
                if name.endswith("proj.weight") or name.endswith("mlp.2.weight"):
                    nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * n_layer))  # GPT-2's scaled residual init

        @staticmethod
        def _init(m):
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0.0, 0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight, 0.0, 0.02)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            pos = torch.arange(T, device=idx.device)
            x = self.drop(self.wte(idx) + self.wpe(pos))
            for blk in self.blocks:
                x = blk(x)
            logits = self.head(self.ln_f(x))
            loss = None if targets is None else F.cross_entropy(logits.view(B * T, -1), targets.view(B * T))
            return logits, loss

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
            for _ in range(max_new_tokens):
                logits, _ = self(idx[:, -self.block_size:])
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
                nxt = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
                idx = torch.cat((idx, nxt), dim=1)
            return idx

    return GPT


def load_text(path):
    with open(path, "rb") as f:
        raw = f.read()
    if hashlib.md5(raw).hexdigest() != DATA_MD5:
        raise RuntimeError(f"{path}: checksum mismatch (expected md5 {DATA_MD5}); the file is damaged or not Tiny "
                           "Shakespeare")
    return raw.decode("utf-8")


def param_groups(model, weight_decay):
    """AdamW groups: decay matrices (Linear weights, the tied token embedding), not biases, norms or wpe."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (decay if p.dim() >= 2 and not name.startswith("wpe") else no_decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def lr_at(it, args):
    """Linear warmup for ``warmup`` iterations, then cosine decay to ``min_lr`` at ``iters``."""
    if it < args.warmup:
        return args.lr * (it + 1) / args.warmup
    t = (it - args.warmup) / max(1, args.iters - args.warmup)
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * min(t, 1.0)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--torch", action="store_true", help="run the same code with real PyTorch")
    p.add_argument("--compile", action="store_true", help="compile the training step (nanoGPT's compile=True)")
    p.add_argument("--device", default="cpu")
    p.add_argument("--n-layer", type=int, default=4)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--block-size", type=int, default=64)
    p.add_argument("--batch-size", type=int, default=12)
    p.add_argument("--dropout", type=float, default=0.0)
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--min-lr", type=float, default=2e-4)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--grad-clip", type=float, default=1.0)
    p.add_argument("--eval-interval", type=int, default=250)
    p.add_argument("--eval-iters", type=int, default=20)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--data", default=DATA)
    p.add_argument("--out-dir", default=os.path.join(HERE, "..", "runs"))
    p.add_argument("--sample-tokens", type=int, default=300)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--top-k", type=int, default=20)
    args = p.parse_args(argv)

    if args.torch:
        import torch
        torch.set_num_threads(min(2, os.cpu_count() or 1))
    else:
        sys.path.insert(0, os.path.join(HERE, ".."))
        import tinytorch as torch
    torch.manual_seed(args.seed)

    text = load_text(args.data)
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    n = int(0.9 * len(data))
    splits = {"train": data[:n], "val": data[n:]}

    def get_batch(split):
        d = splits[split]
        ix = torch.randint(len(d) - args.block_size - 1, (args.batch_size,))
        x = torch.stack([d[i:i + args.block_size] for i in ix.tolist()])
        y = torch.stack([d[i + 1:i + 1 + args.block_size] for i in ix.tolist()])
        return x.to(args.device), y.to(args.device)

    GPT = build(torch)
    model = GPT(len(chars), args.block_size, args.n_layer, args.n_head, args.n_embd, args.dropout).to(args.device)
    nparams = sum(p.numel() for name, p in model.named_parameters())
    opt = torch.optim.AdamW(param_groups(model, args.weight_decay), lr=args.lr, betas=(0.9, 0.99))
    lib = "torch " + torch.__version__ if args.torch else "tinytorch " + torch.__version__
    print(f"{lib}: {nparams / 1e6:.2f}M parameters, vocab {len(chars)}, {len(data)} characters "
          f"({n} train / {len(data) - n} val), device {args.device}")

    @torch.no_grad()
    def estimate():
        model.eval()
        out = {}
        for split in ("train", "val"):
            losses = [model(*get_batch(split))[1].item() for _ in range(args.eval_iters)]
            out[split] = sum(losses) / len(losses)
        model.train()
        return out

    def train_step(x, y):
        _, loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        opt.step()
        return loss
    if args.compile:
        train_step = torch.compile(train_step)

    os.makedirs(args.out_dir, exist_ok=True)
    ckpt = os.path.join(args.out_dir, "gpt_torch.pt" if args.torch else "gpt.pt")
    t0 = time.time()
    losses = None
    for it in range(args.iters + 1):
        if it % args.eval_interval == 0 or it == args.iters:
            losses = estimate()
            print(f"iter {it:5d}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}, "
                  f"{time.time() - t0:.0f}s", flush=True)
            if it > 0:
                torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "iter": it,
                            "val_loss": losses["val"], "config": vars(args), "chars": "".join(chars)}, ckpt)
        if it == args.iters:
            break
        for g in opt.param_groups:
            g["lr"] = lr_at(it, args)
        x, y = get_batch("train")
        train_step(x, y)
    elapsed = time.time() - t0
    print(f"trained {args.iters} iterations in {elapsed:.0f}s ({args.iters / elapsed:.1f} it/s); "
          f"final val loss {losses['val']:.4f}; checkpoint {os.path.relpath(ckpt)}")

    model.eval()
    start = torch.tensor([[stoi["\n"]]], dtype=torch.long, device=args.device)
    out = model.generate(start, args.sample_tokens, temperature=args.temperature, top_k=args.top_k)
    print("--- sample ---")
    print("".join(chars[i] for i in out[0].tolist()))
    return losses["val"]


if __name__ == "__main__":
    main()
