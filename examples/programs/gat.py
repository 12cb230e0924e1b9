"""Node classification with a graph attention network, as pytorch/examples' GAT writes it: weights made with
``torch.empty(size=...)`` and Xavier initialization, a dense adjacency matrix from an integer sparse one plus the
identity, several attention heads whose scores are masked with -inf where there is no edge, concatenated, and a
second attention layer averaging one head. Run it with PyTorch or gradiente: the output is the same."""
import gradiente as torch
import gradiente.nn as nn
import gradiente.nn.functional as F

torch.manual_seed(13)

# three communities of 10 nodes, each node linked to a few others, mostly within its community
n, groups = 30, 3
labels = torch.arange(n) % groups
pairs = torch.randint(0, n, (2, 90))
same = labels[pairs[0]] == labels[pairs[1]]
keep = same | (torch.rand(90) < 0.15)
edges = pairs[:, keep]
adjacency = torch.sparse_coo_tensor(edges, torch.ones(edges.size(1)), (n, n), dtype=torch.int64)
adjacency = torch.eye(n) + adjacency        # self loops; a dense float matrix
features = torch.randn(n, 6) + F.one_hot(labels, 6).float()
links = int((adjacency > 0).sum())
print(f"{edges.size(1)} edges, adjacency {adjacency.dtype} {tuple(adjacency.shape)}, {links} links")


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features, out_features, n_heads, concat, dropout=0.4, leaky_relu_slope=0.2):
        super().__init__()
        self.n_heads, self.concat, self.dropout = n_heads, concat, dropout
        self.n_hidden = out_features // n_heads if concat else out_features
        self.W = nn.Parameter(torch.empty(size=(in_features, self.n_hidden * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * self.n_hidden, 1)))
        self.leakyrelu = nn.LeakyReLU(leaky_relu_slope)
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)

    def forward(self, h, adj):
        nodes = h.shape[0]
        projected = torch.mm(h, self.W).view(nodes, self.n_heads, self.n_hidden).permute(1, 0, 2)
        source = torch.matmul(projected, self.a[:, :self.n_hidden, :])
        target = torch.matmul(projected, self.a[:, self.n_hidden:, :])
        scores = self.leakyrelu(source + target.mT)                     # (heads, nodes, nodes)
        scores = torch.where(adj > 0, scores, torch.full_like(scores, -float("inf")))
        attention = F.dropout(F.softmax(scores, dim=-1), self.dropout, training=self.training)
        out = torch.matmul(attention, projected)
        if self.concat:
            return out.permute(1, 0, 2).contiguous().view(nodes, self.n_heads * self.n_hidden)
        return out.mean(dim=0)


class GAT(nn.Module):
    def __init__(self, in_features, hidden, n_classes, heads):
        super().__init__()
        self.gat1 = GraphAttentionLayer(in_features, hidden, heads, concat=True)
        self.gat2 = GraphAttentionLayer(hidden, n_classes, 1, concat=False)

    def forward(self, x, adj):
        x = F.elu(self.gat1(F.dropout(x, 0.4, training=self.training), adj))
        x = self.gat2(F.dropout(x, 0.4, training=self.training), adj)
        return F.log_softmax(x, dim=1)


model = GAT(6, 16, groups, heads=4)
print(model)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
criterion = nn.NLLLoss()
order = torch.randperm(n)
train, test = order[:18], order[18:]
for epoch in range(40):
    model.train()
    optimizer.zero_grad()
    loss = criterion(model(features, adjacency)[train], labels[train])
    loss.backward()
    optimizer.step()
    if epoch % 10 == 9:
        print(f"epoch {epoch + 1:3d} loss {loss:.4f} attention grad {model.gat1.a.grad.abs().sum():.4f}")
model.eval()
with torch.no_grad():
    predicted = model(features, adjacency).argmax(dim=1)
print(f"test accuracy {(predicted[test] == labels[test]).float().mean():.4f}")
