"""transformers' GPT-2 (random init, small config): loss, gradients, an AdamW step, greedy generate, and a
save_pretrained / from_pretrained round trip (safetensors)."""
import tempfile

import torch
from _common import prepare_reference, report, summary

prepare_reference()
from transformers import GPT2Config, GPT2LMHeadModel  # noqa: E402

torch.manual_seed(0)
config = GPT2Config(vocab_size=97, n_positions=32, n_embd=32, n_layer=2, n_head=4, attn_implementation="eager")
model = GPT2LMHeadModel(config)
ids = torch.randint(0, 97, (2, 12))
out = model(input_ids=ids, labels=ids)
out.loss.backward()
grad = model.transformer.h[0].attn.c_attn.weight.grad
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
opt.step()
opt.zero_grad()
loss2 = model(input_ids=ids, labels=ids).loss.item()
model.eval()
with torch.no_grad():
    tokens = model.generate(ids[:1, :4], max_new_tokens=8, do_sample=False, pad_token_id=0)
    logits = model(input_ids=ids).logits
with tempfile.TemporaryDirectory() as d:
    model.save_pretrained(d)
    again = GPT2LMHeadModel.from_pretrained(d).eval()
    with torch.no_grad():
        reloaded = (again(input_ids=ids).logits - logits).abs().max().item()
report({"loss": out.loss.item(), "logits": summary(out.logits), "grad": summary(grad), "loss_after_step": loss2,
        "tokens": tokens.tolist(), "reload_max_diff": reloaded})
