"""transformers' BERT for masked LM (random init, small config): loss, gradients, an AdamW step, and a
save_pretrained / from_pretrained round trip."""
import tempfile

import torch
from _common import prepare_reference, report, summary

prepare_reference()
from transformers import BertConfig, BertForMaskedLM  # noqa: E402

torch.manual_seed(0)
config = BertConfig(vocab_size=101, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
                    max_position_embeddings=32, attn_implementation="eager")
model = BertForMaskedLM(config)
ids = torch.randint(0, 101, (2, 10))
mask = torch.ones(2, 10, dtype=torch.long)
mask[1, 7:] = 0
labels = ids.clone()
labels[:, ::2] = -100
out = model(input_ids=ids, attention_mask=mask, labels=labels)
out.loss.backward()
grad = model.bert.encoder.layer[0].attention.self.query.weight.grad
torch.optim.AdamW(model.parameters(), lr=1e-2).step()
model.eval()
with torch.no_grad():
    logits = model(input_ids=ids, attention_mask=mask).logits
with tempfile.TemporaryDirectory() as d:
    model.save_pretrained(d)
    with torch.no_grad():
        reloaded = (BertForMaskedLM.from_pretrained(d).eval()(input_ids=ids, attention_mask=mask).logits
                    - logits).abs().max().item()
report({"loss": out.loss.item(), "grad": summary(grad), "logits_after_step": summary(logits),
        "reload_max_diff": reloaded})
