"""Node classification with a two-layer graph convolutional network, as GCN tutorials write it: a sparse
normalized adjacency matrix (D^-1/2 (A + I) D^-1/2) built with sparse_coo_tensor, torch.sparse.mm in each layer,
dropout, weight decay in Adam, and accuracy on a held-out mask. Run it with PyTorch or gradiente: the output is the
same."""
import gradiente as torch
import gradiente.nn as nn
import gradiente.nn.functional as F

torch.manual_seed(42)

# two communities of 12 nodes each, densely linked inside and sparsely between
n, half = 24, 12
edges = [(i, j) for i in range(n) for j in range(i + 1, n)
         if (i < half) == (j < half) and (i * 7 + j * 3) % 4 == 0]
edges += [(0, 12), (5, 17), (9, 21)]
labels = torch.tensor([0] * half + [1] * half)
features = torch.randn(n, 8) + labels.unsqueeze(1).float() * 0.5

index = torch.tensor(edges).t()
index = torch.cat([index, index.flip(0), torch.arange(n).repeat(2, 1)], dim=1)     # both directions, self loops
values = torch.ones(index.size(1))
adjacency = torch.sparse_coo_tensor(index, values, (n, n)).coalesce()
degree = torch.sparse.sum(adjacency, dim=1).to_dense()
inv_sqrt = degree.pow(-0.5)
normalized = torch.sparse_coo_tensor(adjacency.indices(), inv_sqrt[adjacency.indices()[0]] * adjacency.values()
                                     * inv_sqrt[adjacency.indices()[1]], (n, n))
print(normalized)


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x, adj):
        return torch.sparse.mm(adj, x @ self.weight) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


train_mask = torch.zeros(n, dtype=torch.bool)
train_mask[[0, 1, 2, 12, 13, 14]] = True
model = GCN(8, 16, 2, dropout=0.5)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for epoch in range(60):
    model.train()
    optimizer.zero_grad()
    output = model(features, normalized)
    loss = F.nll_loss(output[train_mask], labels[train_mask])
    loss.backward()
    optimizer.step()
    if epoch % 15 == 0:
        print(f"epoch {epoch:3d} loss {loss.item():.4f} weight grad norm {model.gc1.weight.grad.norm():.4f}")
model.eval()
with torch.no_grad():
    predicted = model(features, normalized).argmax(dim=1)
accuracy = (predicted[~train_mask] == labels[~train_mask]).float().mean()
print(f"accuracy on the other nodes: {accuracy:.4f}")
