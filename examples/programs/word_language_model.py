"""A word-level LSTM language model in the style of pytorch/examples' word_language_model: a corpus turned into
batches, nn.Embedding, a 2-layer nn.LSTM with dropout, tied weights, hidden states detached between batches
(truncated backpropagation through time), gradient clipping, a manual SGD update, and the learning rate annealed
when validation loss stops improving. Run it with PyTorch or gradiente: the output is the same."""
import math

import gradiente as torch
import gradiente.nn as nn

torch.manual_seed(1111)

SENTENCES = ("the model reads a word and predicts the next word . the loss is the cross entropy of that guess . "
             "the gradient flows back through time to every step of the network . ")
train_words = (SENTENCES * 6).split()
valid_words = (SENTENCES * 2).split()
vocab = sorted(set(train_words))
word2idx = {w: i for i, w in enumerate(vocab)}


def tokenize(words):
    return torch.tensor([word2idx[w] for w in words], dtype=torch.int64)


def batchify(data, bsz):
    nbatch = data.size(0) // bsz
    data = data.narrow(0, 0, nbatch * bsz)
    return data.view(bsz, -1).t().contiguous()


class RNNModel(nn.Module):
    def __init__(self, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=True):
        super().__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        if tie_weights:
            self.decoder.weight = self.encoder.weight
        self.init_weights()
        self.nhid, self.nlayers = nhid, nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output).view(-1, self.ntoken)
        return nn.functional.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid), weight.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


bptt, batch_size, eval_batch_size = 5, 4, 2
train_data = batchify(tokenize(train_words), batch_size)
val_data = batchify(tokenize(valid_words), eval_batch_size)
model = RNNModel(len(vocab), 16, 16, 2, dropout=0.2)
criterion = nn.NLLLoss()
print(model)


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)


def evaluate(data_source):
    model.eval()
    total_loss = 0.0
    hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


lr, clip = 5.0, 0.25
best_val_loss = None
for epoch in range(1, 5):
    model.train()
    total_loss = 0.0
    hidden = model.init_hidden(batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)
        total_loss += loss.item()
    val_loss = evaluate(val_data)
    print(f"| end of epoch {epoch:3d} | train loss {total_loss / (batch + 1):5.2f} | valid loss {val_loss:5.2f} | "
          f"valid ppl {math.exp(val_loss):8.2f} | lr {lr:.2f}")
    if not best_val_loss or val_loss < best_val_loss:
        best_val_loss = val_loss
    else:
        lr /= 4.0
print(f"grad_fn of the last output: {output.grad_fn.name()}, hidden requires grad: {hidden[0].requires_grad}")
