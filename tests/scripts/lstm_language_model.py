"""A word-level LSTM language model on a tiny corpus (in the style of pytorch/examples word_language_model)."""
import math

import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(1)
corpus = ("the cat sat on the mat . the dog sat on the log . a cat and a dog sat on a mat . "
          "the dog saw the cat . the cat saw a dog on the log . ") * 8
words = corpus.split()
vocab = sorted(set(words))
ids = torch.tensor([vocab.index(w) for w in words], dtype=torch.long)


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.2):
        super().__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid, self.nlayers = nhid, nlayers

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        return self.decoder(self.drop(output)), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    return data.narrow(0, 0, nbatch * bsz).view(bsz, -1).t().contiguous()


def repackage_hidden(h):
    return h.detach() if isinstance(h, torch.Tensor) else tuple(repackage_hidden(v) for v in h)


train = batchify(ids, 4)
model = RNNModel(len(vocab), 16, 32, 2)
criterion = nn.CrossEntropyLoss()
opt = optim.Adam(model.parameters(), lr=0.01)
bptt = 8
for epoch in range(1, 9):
    model.train()
    hidden = model.init_hidden(4)
    total, n = 0.0, 0
    for i in range(0, train.size(0) - 1, bptt):
        seq_len = min(bptt, train.size(0) - 1 - i)
        data, targets = train[i:i + seq_len], train[i + 1:i + 1 + seq_len].reshape(-1)
        hidden = repackage_hidden(hidden)
        model.zero_grad()
        output, hidden = model(data, hidden)
        loss = criterion(output.view(-1, len(vocab)), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25 * 10)
        opt.step()
        total += loss.item()
        n += 1
    print(f"| epoch {epoch} | loss {total / n:5.2f} | ppl {math.exp(total / n):8.2f}")
print(f"RESULT {total / n:.6f}")
