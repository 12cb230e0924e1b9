"""A language model with nn.TransformerEncoder, in the style of PyTorch's "Language Modeling with nn.Transformer"
tutorial: sinusoidal positional encoding as a buffer, a square subsequent mask, gradient clipping, SGD with a
StepLR schedule, and perplexity on held-out text, then a copy of the best model kept with copy.deepcopy. Run it
with PyTorch or gradiente: the output is the same."""
import copy
import math

import gradiente as torch
from gradiente import Tensor, nn
from gradiente.nn import TransformerEncoder, TransformerEncoderLayer

torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(max_len).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)
        pe[:, 0, 0::2] = torch.sin(position * div_term)
        pe[:, 0, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe)

    def forward(self, x: Tensor) -> Tensor:
        x = x + self.pe[:x.size(0)]
        return self.dropout(x)


class TransformerModel(nn.Module):
    def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.2):
        super().__init__()
        self.model_type = "Transformer"
        self.pos_encoder = PositionalEncoding(d_model, dropout)
        encoder_layers = TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.transformer_encoder = TransformerEncoder(encoder_layers, nlayers, enable_nested_tensor=False)
        self.embedding = nn.Embedding(ntoken, d_model)
        self.d_model = d_model
        self.linear = nn.Linear(d_model, ntoken)
        self.init_weights()

    def init_weights(self):
        initrange = 0.1
        self.embedding.weight.data.uniform_(-initrange, initrange)
        self.linear.bias.data.zero_()
        self.linear.weight.data.uniform_(-initrange, initrange)

    def forward(self, src, src_mask=None):
        src = self.embedding(src) * math.sqrt(self.d_model)
        src = self.pos_encoder(src)
        if src_mask is None:
            src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        output = self.transformer_encoder(src, src_mask)
        return self.linear(output)


TEXT = "the cat sat on the mat and the dog sat on the log while the bird sang in the tree " * 6
words = TEXT.split()
vocab = {w: i for i, w in enumerate(sorted(set(words)))}
data = torch.tensor([vocab[w] for w in words], dtype=torch.long)
split = int(0.8 * len(data))


def batchify(data, bsz):
    seq_len = data.size(0) // bsz
    return data[:seq_len * bsz].view(bsz, seq_len).t().contiguous()


train_data, val_data = batchify(data[:split], 4), batchify(data[split:], 2)
bptt = 8


def get_batch(source, i):
    seq_len = min(bptt, len(source) - 1 - i)
    return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].reshape(-1)


ntokens = len(vocab)
model = TransformerModel(ntokens, 16, 2, 32, 2, 0.2)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
print(f"parameters: {sum(p.numel() for p in model.parameters())}")


def evaluate(model, eval_data):
    model.eval()
    total_loss = 0.0
    with torch.no_grad():
        for i in range(0, eval_data.size(0) - 1, bptt):
            data, targets = get_batch(eval_data, i)
            output = model(data)
            total_loss += data.size(0) * criterion(output.view(-1, ntokens), targets).item()
    return total_loss / (len(eval_data) - 1)


best_val_loss, best_model = float("inf"), None
for epoch in range(1, 5):
    model.train()
    total_loss = 0.0
    for batch, i in enumerate(range(0, train_data.size(0) - 1, bptt)):
        data, targets = get_batch(train_data, i)
        output = model(data)
        loss = criterion(output.view(-1, ntokens), targets)
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        total_loss += loss.item()
    val_loss = evaluate(model, val_data)
    lr = scheduler.get_last_lr()[0]
    print(f"| end of epoch {epoch:3d} | lr {lr:02.2f} | train loss {total_loss / (batch + 1):5.2f}"
          f" | valid loss {val_loss:5.2f} | valid ppl {math.exp(val_loss):8.2f}")
    if val_loss < best_val_loss:
        best_val_loss, best_model = val_loss, copy.deepcopy(model)
    scheduler.step()
print(f"best valid loss {best_val_loss:5.2f}, best model's loss again {evaluate(best_model, val_data):5.2f}")
