#!/usr/bin/env python3
"""pyg_check.py: rebuild an `mpignn export` model in PyTorch and compare its
logits with mpignn's.

    python3 scripts/pyg_check.py --data ../shared/data/cora \
        --state model.safetensors --logits logits.npy [--tol 1e-4]

`--state` is written by `mpignn export` (FILE.json beside it holds the
constructor), `--logits` by `mpignn predict --logits` (row i = node i).

The model is built from the sidecar's class and keyword arguments and
loaded with `load_state_dict(state, strict=True)`. When PyTorch Geometric
is installed its own `torch_geometric.nn.models` classes are used; without
it (Debian has no PyG package) the small modules below stand in: they have
PyG's constructor arguments, module and parameter names and shapes, and
compute PyG's documented layer equations in plain PyTorch:

- SAGEConv:  out_i = lin_l(AGG_{j in N(i)} m_j) + lin_r(x_i), AGG the mean,
  sum or elementwise max (aggr), m_j = x_j, or relu(lin(x_j)) with
  project=True; an empty neighbourhood aggregates to 0 (PyG's scatter)
- GCNConv:  out = D^-1/2 (A + I) D^-1/2 lin(x) + bias, D the in-degree + 1
- GATConv:  z = lin(x) viewed (N, H, C); e_ij = LeakyReLU_0.2(<att_src, z_j>
  + <att_dst, z_i>); alpha = softmax over j in N(i) + {i}; heads
  concatenated (hidden layers) or averaged (last layer), then + bias. With
  edge_dim, + <att_edge, lin_edge(e_ij)> inside the LeakyReLU.
- GATv2Conv (PyG 2.6, share_weights=False):  e_ij = <att, LeakyReLU_0.2(
  lin_l(x_j) + lin_r(x_i) [+ lin_edge(e_ij)])>; alpha = softmax over j in
  N(i) + {i}; out_i = sum_j alpha_ij lin_l(x_j), heads as GATConv, + bias.
- Both add self-loops after removing any, and give a loop the mean of the
  node's incoming edges' features (add_self_loops(fill_value='mean')).
- GINConv:  out_i = nn((1 + eps) x_i + sum_{j in N(i)} x_j), nn = GIN's
  MLP([in, out, out]) (Linear, ReLU, Linear); GINEConv (mpignn's gine, module
  GINE below) sums relu(x_j + lin(e_ji)) instead.
- BasicGNN's norm ("layer_norm" with norm_kwargs mode "node": LayerNorm per
  node) and jk ("cat", "max", "last": JumpingKnowledge, then lin), PyG 2.6.
- ResidualBasicGNN (mpignn's --residual; PyG has no such class): a BasicGNN
  with res.l = Linear(in, hidden, bias=False) where the widths differ,
  x_{l+1} = dropout(relu(norm(conv(x_l))) + res.l(x_l)).

mpignn's GCN normalises its FIRST layer by 1/d_i (the mean over in-neighbours
and self) instead of 1/sqrt(d_i d_j) (docs/python.md, "Where mpignn differs from
the PyG classes"); the sidecar says so, and this script reproduces it the way a PyG
user would: layer 0 with normalize=False and edge weights 1/d_dst over the
graph with self-loops. It prints the max abs difference against the pure
GCNConv equations too.

Exit status 0 when the max abs logit difference is at most --tol.
"""
import argparse
import gzip
import importlib
import json
import os
import sys
import warnings

import numpy as np
import torch
import torch.nn.functional as F


# ---------------------------------------------------------------- file I/O

def load_safetensors(path):
    """A safetensors file as {name: torch.Tensor} (json + numpy only)."""
    dtypes = {"F32": np.float32, "F64": np.float64, "F16": np.float16}
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    state = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        lo, hi = info["data_offsets"]
        arr = np.frombuffer(data[lo:hi], dtype=dtypes[info["dtype"]]).reshape(info["shape"])
        state[name] = torch.from_numpy(arr.astype(np.float32))
    return state


def save_safetensors(path, state):
    """Write {name: tensor} as float32 safetensors (json + numpy only), in
    the dict's order, without __metadata__: a file as PyG users write it."""
    header, blobs, off = {}, [], 0
    for name, t in state.items():
        b = t.detach().contiguous().numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little"))
        f.write(h)
        for b in blobs:
            f.write(b)


def load_npy(path):
    return torch.from_numpy(np.load(path))


def read_csv(path, dtype):
    """A gzip'd CSV of numbers as a 2-D array (one row per line)."""
    with gzip.open(path, "rt") as f:
        lines = f.read().strip().split("\n")
    flat = np.fromstring(",".join(lines), sep=",", dtype=dtype)
    return flat.reshape(len(lines), -1)


def read_ogb_graph(root):
    """Features and edge_index of a dataset in the OGB raw layout, as mpignn
    reads it: every edge in both directions, self-loops dropped, duplicates
    removed (PyG: ToUndirected + RemoveSelfLoops)."""
    x = torch.from_numpy(read_csv(f"{root}/raw/node-feat.csv.gz", np.float32))
    e = torch.from_numpy(read_csv(f"{root}/raw/edge.csv.gz", np.int64)).t()
    e = torch.cat([e, e.flip(0)], dim=1)
    e = e[:, e[0] != e[1]]
    e = torch.unique(e, dim=1)  # sorted, no repeats
    return x, e


def read_ogb_hetero(root):
    """Typed features, edge_index per edge type and the labelled type of a
    heterogeneous dataset in OGB's raw layout, as mpignn reads it: every
    stored relation src___rel___dst gets dst___rev_rel___src with the edges
    reversed (PyG: ToUndirected), duplicates removed."""
    with gzip.open(f"{root}/raw/num-node-dict.csv.gz", "rt") as f:
        types, counts = f.read().strip().split("\n")[:2]
    num = dict(zip(types.split(","), map(int, counts.split(","))))
    x = {}
    for t in num:
        path = f"{root}/raw/node-feat/{t}/node-feat.csv.gz"
        try:
            x[t] = torch.from_numpy(read_csv(path, np.float32))
        except FileNotFoundError:
            pass
    with gzip.open(f"{root}/raw/triplet-type-list.csv.gz", "rt") as f:
        triplets = [tuple(l.split(",")) for l in f.read().strip().split("\n")]
    edges = {}
    for s_, r, d in triplets:
        e = torch.from_numpy(read_csv(f"{root}/raw/relations/{s_}___{r}___{d}/edge.csv.gz", np.int64)).t()
        if s_ == d:  # a relation within one type takes its reverse edges itself
            edges[(s_, r, d)] = torch.cat([e, e.flip(0)], dim=1)
        else:
            edges[(s_, r, d)] = e
            edges[(d, "rev_" + r, s_)] = e.flip(0)
    edges = {k: torch.unique(v, dim=1) for k, v in edges.items()}
    with gzip.open(f"{root}/raw/nodetype-has-label.csv.gz", "rt") as f:
        head, vals = f.read().strip().split("\n")[:2]
    labelled = [t for t, v in zip(head.split(","), vals.split(",")) if v.strip() == "True"]
    return num, x, edges, labelled


def read_hetero_edge_attrs(root, num):
    """Edge_index and edge_attr per edge type with mpignn's relation edge
    features (partition --edge-feat): column c is the per-edge attribute
    names[c] (every raw/relations/<rel>/edge_<name>.csv.gz but edge_time,
    sorted), 0 for a relation without it; reversed edges keep their line's
    row (PyG's ToUndirected copies edge_attr); of repeated edges the lowest
    line's row is kept, as mpignn's reader does."""
    with gzip.open(f"{root}/raw/triplet-type-list.csv.gz", "rt") as f:
        triplets = [tuple(l.split(",")) for l in f.read().strip().split("\n")]
    names = set()
    for s_, r, d in triplets:
        for fn in os.listdir(f"{root}/raw/relations/{s_}___{r}___{d}"):
            if fn.startswith("edge_") and fn.endswith(".csv.gz") and fn != "edge_time.csv.gz":
                names.add(fn[len("edge_"):-len(".csv.gz")])
    names = sorted(names)
    edges, attrs = {}, {}
    for s_, r, d in triplets:
        rd = f"{root}/raw/relations/{s_}___{r}___{d}"
        e = read_csv(f"{rd}/edge.csv.gz", np.int64).reshape(-1, 2).T
        m = e.shape[1]
        a = np.zeros((m, len(names)), dtype=np.float32)
        for c, n in enumerate(names):
            if os.path.exists(f"{rd}/edge_{n}.csv.gz"):
                a[:, c] = read_csv(f"{rd}/edge_{n}.csv.gz", np.float32).reshape(-1)
        ids = np.arange(m)
        parts = {(s_, r, d): [(e, ids)]}
        if s_ == d:
            parts[(s_, r, d)].append((e[::-1], ids))
        else:
            parts[(d, "rev_" + r, s_)] = [(e[::-1], ids)]
        for k, ps in parts.items():
            ek = np.concatenate([p[0] for p in ps], axis=1)
            ik = np.concatenate([p[1] for p in ps])
            key = ek[0] * num[k[2]] + ek[1]
            order = np.lexsort((ik, key))  # by (source, destination), then line
            first = np.ones(len(order), dtype=bool)
            first[1:] = key[order][1:] != key[order][:-1]
            keep = order[first]
            edges[k] = torch.from_numpy(np.ascontiguousarray(ek[:, keep]))
            attrs[k] = torch.from_numpy(a[ik[keep]])
    return edges, attrs, names


# ------------------------------------- PyG's layers in plain PyTorch (stand-in)

def scatter_sum(src, index, n):
    out = torch.zeros((n,) + src.shape[1:], dtype=src.dtype)
    return out.index_add_(0, index, src)


def with_self_loops(edge_index, n):
    loops = torch.arange(n).repeat(2, 1)
    return torch.cat([edge_index[:, edge_index[0] != edge_index[1]], loops], dim=1)


def with_self_loops_attr(edge_index, edge_attr, n):
    """remove_self_loops then add_self_loops(fill_value='mean'): the loops
    last, each with the mean of its node's incoming edges' features (zero
    without any)."""
    keep = edge_index[0] != edge_index[1]
    ei, ea = edge_index[:, keep], edge_attr[keep]
    cnt = scatter_sum(torch.ones(ei.size(1)), ei[1], n).clamp(min=1)
    loop_attr = scatter_sum(ea, ei[1], n) / cnt.unsqueeze(1)
    loops = torch.arange(n).repeat(2, 1)
    return torch.cat([ei, loops], dim=1), torch.cat([ea, loop_attr], dim=0)


def segment_softmax(e, dst, n):
    """softmax of the scores e (E, H) over the edges of each destination."""
    H = e.size(1)
    e_max = torch.full((n, H), -float("inf")).scatter_reduce(0, dst.unsqueeze(1).expand(-1, H), e, "amax")
    w = (e - e_max[dst]).exp()
    return w / scatter_sum(w, dst, n)[dst]


class SAGEConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, aggr="mean", project=False):
        super().__init__()
        assert aggr in ("mean", "sum", "add", "max"), aggr
        self.aggr, self.project = aggr, project
        if project:  # PyG: Linear(in_channels[0], in_channels[0], bias=True)
            self.lin = torch.nn.Linear(in_channels, in_channels, bias=True)
        self.lin_l = torch.nn.Linear(in_channels, out_channels, bias=True)
        self.lin_r = torch.nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        x_src, x_dst = x if isinstance(x, tuple) else (x, x)  # bipartite in HeteroConv
        if self.project:  # the sources only; the root x_dst is not projected
            x_src = self.lin(x_src).relu()
        src, dst = edge_index
        n = x_dst.size(0)
        msg = x_src[src]
        if self.aggr == "max":
            # PyG's scatter(reduce="max"): scatter_reduce amax into zeros
            # without the initial values, so an empty group stays 0.
            agg = torch.zeros((n, msg.size(1)), dtype=msg.dtype).scatter_reduce(
                0, dst.unsqueeze(1).expand_as(msg), msg, "amax", include_self=False)
        else:
            agg = scatter_sum(msg, dst, n)
            if self.aggr == "mean":
                agg = agg / scatter_sum(torch.ones(src.numel()), dst, n).clamp(min=1).unsqueeze(1)
        return self.lin_l(agg) + self.lin_r(x_dst)


class GCNConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, normalize=True):
        super().__init__()
        self.normalize = normalize
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        self.bias = torch.nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index, edge_weight=None):
        n = x.size(0)
        if self.normalize:  # gcn_norm: self-loops, D^-1/2 (A+I) D^-1/2
            edge_index = with_self_loops(edge_index, n)
            src, dst = edge_index
            deg = scatter_sum(torch.ones(src.numel()), dst, n)
            edge_weight = deg[src].rsqrt() * deg[dst].rsqrt()
        src, dst = edge_index
        h = self.lin(x)
        return scatter_sum(edge_weight.unsqueeze(1) * h[src], dst, n) + self.bias


class GATConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, heads=1, concat=True, dropout=0.0, edge_dim=None):
        super().__init__()
        self.heads, self.out_channels, self.concat = heads, out_channels, concat
        self.lin = torch.nn.Linear(in_channels, heads * out_channels, bias=False)
        self.att_src = torch.nn.Parameter(torch.zeros(1, heads, out_channels))
        self.att_dst = torch.nn.Parameter(torch.zeros(1, heads, out_channels))
        if edge_dim is not None:
            self.lin_edge = torch.nn.Linear(edge_dim, heads * out_channels, bias=False)
            self.att_edge = torch.nn.Parameter(torch.zeros(1, heads, out_channels))
        else:
            self.lin_edge = None
        self.bias = torch.nn.Parameter(torch.zeros(heads * out_channels if concat else out_channels))

    def forward(self, x, edge_index, edge_attr=None):
        n, H, C = x.size(0), self.heads, self.out_channels
        if edge_attr is not None and self.lin_edge is not None:
            (src, dst), edge_attr = with_self_loops_attr(edge_index, edge_attr, n)
        else:
            src, dst = with_self_loops(edge_index, n)
        z = self.lin(x).view(n, H, C)
        a_src = (z * self.att_src).sum(-1)
        a_dst = (z * self.att_dst).sum(-1)
        e = a_src[src] + a_dst[dst]
        if edge_attr is not None and self.lin_edge is not None:
            e = e + (self.lin_edge(edge_attr).view(-1, H, C) * self.att_edge).sum(-1)
        alpha = segment_softmax(F.leaky_relu(e, 0.2), dst, n)  # (E, H)
        out = scatter_sum(alpha.unsqueeze(-1) * z[src], dst, n)
        out = out.reshape(n, H * C) if self.concat else out.mean(dim=1)
        return out + self.bias


class MLP(torch.nn.Module):
    """torch_geometric.nn.MLP as GIN's init_conv builds it (PyG 2.6
    basic_gnn.py): MLP([in, out, out]) with act relu, norm None (identity,
    no parameters), plain_last, no dropout: lins[1](relu(lins[0](x)))."""

    def __init__(self, channel_list):
        super().__init__()
        self.in_channels = channel_list[0]  # GINEConv(edge_dim=) sizes its lin from it
        self.lins = torch.nn.ModuleList([torch.nn.Linear(i, o) for i, o in zip(channel_list[:-1], channel_list[1:])])

    def forward(self, x):
        for k, lin in enumerate(self.lins):
            x = lin(x)
            if k < len(self.lins) - 1:
                x = x.relu()
        return x


class GINConv(torch.nn.Module):
    """PyG GINConv: nn((1 + eps) x_i + sum_{j -> i} x_j), aggr add over every
    edge (no self-loops added); eps a Parameter with train_eps, else a
    buffer, shape (1,), in the state dict either way."""

    def __init__(self, nn, eps=0.0, train_eps=False):
        super().__init__()
        self.nn = nn
        if train_eps:
            self.eps = torch.nn.Parameter(torch.tensor([float(eps)]))
        else:
            self.register_buffer("eps", torch.tensor([float(eps)]))

    def message(self, x_j, edge_attr):
        return x_j

    def forward(self, x, edge_index, edge_attr=None):
        src, dst = edge_index
        out = scatter_sum(self.message(x[src], edge_attr), dst, x.size(0))
        return self.nn(out + (1 + self.eps) * x)


class GINEConv(GINConv):
    """PyG GINEConv: messages relu(x_j + lin(e_ji)), lin = Linear(edge_dim,
    nn.in_channels) when edge_dim is set."""

    def __init__(self, nn, eps=0.0, train_eps=False, edge_dim=None):
        super().__init__(nn, eps, train_eps)
        self.lin = torch.nn.Linear(edge_dim, nn.in_channels) if edge_dim is not None else None

    def message(self, x_j, edge_attr):
        if self.lin is not None:
            edge_attr = self.lin(edge_attr)
        return (x_j + edge_attr).relu()


class GATv2Conv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, heads=1, concat=True, dropout=0.0, edge_dim=None):
        super().__init__()
        self.heads, self.out_channels, self.concat = heads, out_channels, concat
        self.lin_l = torch.nn.Linear(in_channels, heads * out_channels, bias=True)
        self.lin_r = torch.nn.Linear(in_channels, heads * out_channels, bias=True)
        self.att = torch.nn.Parameter(torch.zeros(1, heads, out_channels))
        if edge_dim is not None:
            self.lin_edge = torch.nn.Linear(edge_dim, heads * out_channels, bias=False)
        else:
            self.lin_edge = None
        self.bias = torch.nn.Parameter(torch.zeros(heads * out_channels if concat else out_channels))

    def forward(self, x, edge_index, edge_attr=None):
        n, H, C = x.size(0), self.heads, self.out_channels
        if edge_attr is not None:
            (src, dst), edge_attr = with_self_loops_attr(edge_index, edge_attr, n)
        else:
            src, dst = with_self_loops(edge_index, n)
        x_l = self.lin_l(x).view(n, H, C)
        x_r = self.lin_r(x).view(n, H, C)
        m = x_l[src] + x_r[dst]
        if edge_attr is not None:
            m = m + self.lin_edge(edge_attr).view(-1, H, C)
        alpha = segment_softmax((F.leaky_relu(m, 0.2) * self.att).sum(-1), dst, n)  # (E, H)
        out = scatter_sum(alpha.unsqueeze(-1) * x_l[src], dst, n)
        out = out.reshape(n, H * C) if self.concat else out.mean(dim=1)
        return out + self.bias


class LayerNorm(torch.nn.Module):
    """torch_geometric.nn.norm.LayerNorm (affine): mode "node" is
    torch.nn.LayerNorm(in_channels) on every node's row (mpignn's --norm
    layer); PyG's default mode "graph" is not used by mpignn."""

    def __init__(self, in_channels, eps=1e-5, affine=True, mode="graph"):
        super().__init__()
        assert mode == "node" and affine
        self.in_channels, self.eps = in_channels, eps
        self.weight = torch.nn.Parameter(torch.ones(in_channels))
        self.bias = torch.nn.Parameter(torch.zeros(in_channels))

    def forward(self, x):
        return F.layer_norm(x, (self.in_channels,), self.weight, self.bias, self.eps)


class JumpingKnowledge(torch.nn.Module):
    """torch_geometric.nn.models.JumpingKnowledge for cat and max (no
    parameters; lstm is not offered by mpignn)."""

    def __init__(self, mode, channels=None, num_layers=None):
        super().__init__()
        assert mode in ("cat", "max")
        self.mode = mode

    def forward(self, xs):
        return torch.cat(xs, dim=-1) if self.mode == "cat" else torch.stack(xs, dim=-1).max(dim=-1)[0]


class BasicGNN(torch.nn.Module):
    """torch_geometric.nn.models.BasicGNN (PyG 2.6) with out_channels set,
    act=relu, norm None or "layer_norm", jk None, "cat", "max" or "last":
    per layer conv, norm, ReLU, dropout (the last conv to out_channels
    without them unless jk is set), then jk and lin."""

    def __init__(self, in_channels, hidden_channels, num_layers, out_channels, dropout=0.0,
                 norm=None, norm_kwargs=None, jk=None, **kwargs):
        super().__init__()
        self.dropout, self.jk_mode, self.num_layers = dropout, jk, num_layers
        self.in_channels, self.hidden_channels = in_channels, hidden_channels
        self.convs = torch.nn.ModuleList()
        for l in range(num_layers):
            i = in_channels if l == 0 else hidden_channels
            to_out = l == num_layers - 1 and jk is None
            self.convs.append(self.init_conv(i, out_channels if to_out else hidden_channels, last=to_out, **kwargs))
        self.norms = None
        if norm is not None:
            assert norm == "layer_norm"
            n = num_layers if jk is not None else num_layers - 1
            self.norms = torch.nn.ModuleList([LayerNorm(hidden_channels, **(norm_kwargs or {})) for _ in range(n)])
        if jk is not None and jk != "last":
            self.jk = JumpingKnowledge(jk, hidden_channels, num_layers)
        if jk is not None:
            self.lin = torch.nn.Linear(num_layers * hidden_channels if jk == "cat" else hidden_channels, out_channels)

    def forward(self, x, edge_index, edge_attr=None):
        xs = []
        for l, conv in enumerate(self.convs):
            x = conv(x, edge_index) if edge_attr is None else conv(x, edge_index, edge_attr)
            if l == self.num_layers - 1 and self.jk_mode is None:
                break
            if self.norms is not None:
                x = self.norms[l](x)
            x = F.dropout(F.relu(x), self.dropout, self.training)
            xs.append(x)
        x = self.jk(xs) if hasattr(self, "jk") else x
        return self.lin(x) if hasattr(self, "lin") else x


def ResidualBasicGNN(gnn, **kwargs):
    """mpignn's --residual on a BasicGNN (PyG's class if installed, else the
    stand-in above): every layer but the conv to the output computes
    dropout(relu(norm(conv(x))) + res[l](x)), the order of PyG's
    DeepGCNLayer(block="res"); res[l] is Linear(in, hidden, bias=False)
    where the widths differ, else the identity. PyG has no such class."""
    base, _ = model_class(gnn)

    class Residual(base):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.res = torch.nn.ModuleList()
            for l in range(kw["num_layers"]):
                i = kw["in_channels"] if l == 0 else kw["hidden_channels"]
                h = kw["hidden_channels"]
                self.res.append(torch.nn.Linear(i, h, bias=False) if i != h else torch.nn.Identity())

        def forward(self, x, edge_index, edge_attr=None):
            xs = []
            for l, conv in enumerate(self.convs):
                h = conv(x, edge_index) if edge_attr is None else conv(x, edge_index, edge_attr)
                if l == self.num_layers - 1 and self.jk_mode is None:
                    x = h
                    break
                if self.norms is not None:
                    h = self.norms[l](h)
                x = F.dropout(F.relu(h) + self.res[l](x), self.dropout, self.training)
                xs.append(x)
            x = self.jk(xs) if hasattr(self, "jk") else x
            return self.lin(x) if hasattr(self, "lin") else x

    return Residual(**kwargs)


class GraphSAGE(BasicGNN):
    def init_conv(self, i, o, last, aggr="mean", project=False):
        return SAGEConv(i, o, aggr=aggr, project=project)


class GCN(BasicGNN):
    def init_conv(self, i, o, last):
        return GCNConv(i, o)


class GAT(BasicGNN):
    def init_conv(self, i, o, last, heads=1, v2=False, edge_dim=None):
        conv = GATv2Conv if v2 else GATConv
        if last:  # the conv to out_channels averages its heads
            return conv(i, o, heads=heads, concat=False, edge_dim=edge_dim)
        return conv(i, o // heads, heads=heads, concat=True, edge_dim=edge_dim)


class GIN(BasicGNN):
    def init_conv(self, i, o, last, train_eps=False, eps=0.0):
        return GINConv(MLP([i, o, o]), eps=eps, train_eps=train_eps)


class GINE(BasicGNN):
    """mpignn's gine: PyG has GINEConv but no model class; this is GIN with
    GINEConv(MLP([in, out, out]), eps, train_eps, edge_dim) in its place."""

    def init_conv(self, i, o, last, train_eps=False, eps=0.0, edge_dim=None):
        return GINEConv(MLP([i, o, o]), eps=eps, train_eps=train_eps, edge_dim=edge_dim)


class HeteroConv(torch.nn.Module):
    """torch_geometric.nn.HeteroConv: one convolution per edge type, results
    summed per destination type; PyG's ModuleDict keys an edge type as
    "<src___rel___dst>"."""

    def __init__(self, convs, aggr="sum"):
        super().__init__()
        assert aggr == "sum"
        self.convs = torch.nn.ModuleDict({"<" + "___".join(k) + ">": v for k, v in convs.items()})

    def forward(self, x_dict, edge_index_dict, edge_attr_dict=None):
        out = {}
        for key, conv in self.convs.items():
            s_, r, d = key[1:-1].split("___")
            if (s_, r, d) not in edge_index_dict:
                continue
            args = ((x_dict[s_], x_dict[d]), edge_index_dict[(s_, r, d)])
            if edge_attr_dict is not None:
                args += (edge_attr_dict[(s_, r, d)],)
            o = conv(*args)
            out[d] = out[d] + o if d in out else o
        return out


class GeneralConv(torch.nn.Module):
    """torch_geometric.nn.GeneralConv (torch_geometric/nn/conv/general_conv.py,
    PyG 2.6) with directed_msg=True, heads=1, attention=False: out_i =
    aggr_j (lin_msg(x_j) + lin_edge(e_ij)) + lin_self(x_i); lin_self is the
    identity unless skip_linear or the widths differ. Only aggr "mean"."""

    def __init__(self, in_channels, out_channels, in_edge_channels=None, aggr="add", skip_linear=False, bias=True):
        super().__init__()
        assert aggr == "mean"
        self.in_channels, self.out_channels = in_channels, out_channels
        self.lin_msg = torch.nn.Linear(in_channels, out_channels, bias=bias)
        if skip_linear or in_channels != out_channels:
            self.lin_self = torch.nn.Linear(in_channels, out_channels, bias=bias)
        else:
            self.lin_self = torch.nn.Identity()
        if in_edge_channels is not None:
            self.lin_edge = torch.nn.Linear(in_edge_channels, out_channels, bias=bias)

    def forward(self, x, edge_index, edge_attr=None):
        x_src, x_dst = x if isinstance(x, tuple) else (x, x)
        src, dst = edge_index
        msg = self.lin_msg(x_src[src])
        if edge_attr is not None:
            msg = msg + self.lin_edge(edge_attr)
        n = x_dst.size(0)
        cnt = scatter_sum(torch.ones(src.numel()), dst, n).clamp(min=1)
        return scatter_sum(msg, dst, n) / cnt.unsqueeze(1) + self.lin_self(x_dst)


class RGCNConv(torch.nn.Module):
    """torch_geometric.nn.RGCNConv (aggr mean, root weight, bias): out_i =
    x_i root + bias + sum_r mean_{j in N_r(i)} x_j W_r, with W_r =
    sum_b comp[r, b] weight[b] under basis decomposition."""

    def __init__(self, in_channels, out_channels, num_relations, num_bases=None, aggr="mean"):
        super().__init__()
        assert aggr == "mean"
        self.num_relations, self.num_bases = num_relations, num_bases
        self.in_channels, self.out_channels = in_channels, out_channels
        if num_bases is not None:
            self.weight = torch.nn.Parameter(torch.zeros(num_bases, in_channels, out_channels))
            self.comp = torch.nn.Parameter(torch.zeros(num_relations, num_bases))
        else:
            self.weight = torch.nn.Parameter(torch.zeros(num_relations, in_channels, out_channels))
        self.root = torch.nn.Parameter(torch.zeros(in_channels, out_channels))
        self.bias = torch.nn.Parameter(torch.zeros(out_channels))

    def forward(self, x, edge_index, edge_type):
        w = self.weight
        if self.num_bases is not None:
            w = (self.comp @ w.view(self.num_bases, -1)).view(self.num_relations, self.in_channels, self.out_channels)
        n = x.size(0)
        out = x @ self.root + self.bias
        for r in range(self.num_relations):
            src, dst = edge_index[:, edge_type == r]
            cnt = scatter_sum(torch.ones(src.numel()), dst, n).clamp(min=1)
            out = out + (scatter_sum(x[src], dst, n) / cnt.unsqueeze(1)) @ w[r]
        return out


class RGCNEdgeConv(RGCNConv):
    """mpignn's R-GCN with relation edge features. NOT a PyG class: PyG's
    RGCNConv takes no edge_attr. RGCNConv plus edge_weight (R, edge_dim,
    out): out_i += sum_r mean_{j in N_r(i)} e_ij edge_weight[r]."""

    def __init__(self, in_channels, out_channels, num_relations, num_bases=None, aggr="mean", edge_dim=1):
        super().__init__(in_channels, out_channels, num_relations, num_bases, aggr)
        self.edge_weight = torch.nn.Parameter(torch.zeros(num_relations, edge_dim, out_channels))

    def forward(self, x, edge_index, edge_type, edge_attr):
        out = super().forward(x, edge_index, edge_type)
        n = x.size(0)
        for r in range(self.num_relations):
            sel = edge_type == r
            dst = edge_index[1, sel]
            cnt = scatter_sum(torch.ones(dst.numel()), dst, n).clamp(min=1)
            out = out + (scatter_sum(edge_attr[sel], dst, n) / cnt.unsqueeze(1)) @ self.edge_weight[r]
        return out


# mpignn's heterogeneous models. PyG has no class for them; with PyG
# installed these same modules run on its HeteroConv, SAGEConv and RGCNConv.

class HeteroInput(torch.nn.Module):
    """Per node type: x_t = lins[t](cat(features_t, embeddings[t].weight)),
    either part possibly absent; no activation."""

    def __init__(self, node_types, in_channels, hidden_channels, embeddings):
        super().__init__()
        self.node_types = node_types
        self.lins = torch.nn.ModuleDict({t: torch.nn.Linear(in_channels[t], hidden_channels) for t in node_types})
        self.embeddings = torch.nn.ModuleDict({t: torch.nn.Embedding(n, d) for t, (n, d) in embeddings.items()})

    def inputs(self, x_dict):
        out = {}
        for t in self.node_types:
            parts = [x_dict[t]] if t in x_dict else []
            if t in self.embeddings:
                parts.append(self.embeddings[t].weight)
            out[t] = self.lins[t](torch.cat(parts, dim=1))
        return out


class HeteroSAGE(HeteroInput):
    def __init__(self, node_types, edge_types, in_channels, hidden_channels, out_channels, num_layers,
                 embeddings, dropout=0.0, edge_dim=None):
        super().__init__(node_types, in_channels, hidden_channels, embeddings)
        self.convs = torch.nn.ModuleList()
        for l in range(num_layers):
            o = out_channels if l == num_layers - 1 else hidden_channels
            if edge_dim:  # relation edge features: SAGE with an edge projection
                convs = {tuple(e): GeneralConv(hidden_channels, o, in_edge_channels=edge_dim, aggr="mean", skip_linear=True)
                         for e in edge_types}
            else:
                convs = {tuple(e): SAGEConv(hidden_channels, o, aggr="mean") for e in edge_types}
            self.convs.append(HeteroConv(convs, aggr="sum"))

    def forward(self, x_dict, edge_index_dict, edge_attr_dict=None):
        h = self.inputs(x_dict)
        for l, conv in enumerate(self.convs):
            h = conv(h, edge_index_dict, edge_attr_dict)
            if l < len(self.convs) - 1:
                h = {t: v.relu() for t, v in h.items()}
        return h


class RGCN(HeteroInput):
    def __init__(self, node_types, edge_types, in_channels, hidden_channels, out_channels, num_layers,
                 embeddings, num_bases=0, dropout=0.0, edge_dim=None):
        super().__init__(node_types, in_channels, hidden_channels, embeddings)
        self.edge_types = [tuple(e) for e in edge_types]
        self.convs = torch.nn.ModuleList()
        for l in range(num_layers):
            o = out_channels if l == num_layers - 1 else hidden_channels
            if edge_dim:
                self.convs.append(RGCNEdgeConv(hidden_channels, o, len(edge_types), num_bases or None, aggr="mean", edge_dim=edge_dim))
            else:
                self.convs.append(RGCNConv(hidden_channels, o, len(edge_types), num_bases or None, aggr="mean"))

    def forward(self, x_dict, edge_index_dict, edge_attr_dict=None):
        h = self.inputs(x_dict)
        off, start = {}, 0  # homogenized ids: node types one after another
        for t in self.node_types:
            off[t], start = start, start + h[t].size(0)
        x = torch.cat([h[t] for t in self.node_types])
        ei, et = [], []
        for r, (s_, rel, d) in enumerate(self.edge_types):
            e = edge_index_dict[(s_, rel, d)]
            ei.append(torch.stack([e[0] + off[s_], e[1] + off[d]]))
            et.append(torch.full((e.size(1),), r))
        ei, et = torch.cat(ei, dim=1), torch.cat(et)
        ea = None if edge_attr_dict is None else torch.cat([edge_attr_dict[k] for k in self.edge_types])
        for l, conv in enumerate(self.convs):
            x = conv(x, ei, et) if ea is None else conv(x, ei, et, ea)
            if l < len(self.convs) - 1:
                x = x.relu()
        return {t: x[off[t]:off[t] + h[t].size(0)] for t in self.node_types}


class HGBHomogeneous(HeteroInput):
    """A homogeneous model on a heterogeneous graph, as the Heterogeneous
    Graph Benchmark (Lv et al., KDD 2021) runs GCN and GAT: the typed input
    projections, then the convolutions of `conv` (a BasicGNN class, built
    with conv_kwargs) over the homogenized graph, ignoring node and edge
    types: node types concatenated in node_types order (PyG's
    HeteroData.to_homogeneous), the edges of every edge type with ids
    offset accordingly."""

    def __init__(self, node_types, edge_types, in_channels, hidden_channels, out_channels, num_layers,
                 embeddings, conv, conv_kwargs, dropout=0.0):
        super().__init__(node_types, in_channels, hidden_channels, embeddings)
        self.edge_types = [tuple(e) for e in edge_types]
        cls, _ = model_class(conv)
        gnn = cls(hidden_channels, hidden_channels, num_layers, out_channels, dropout=dropout, **conv_kwargs)
        self.convs = gnn.convs  # the state dict's convs.l, as mpignn exports them
        self.gnn = [gnn]  # a plain list, so its parameters are registered once (as convs)

    def train(self, mode=True):
        super().train(mode)
        self.gnn[0].train(mode)  # not a registered submodule: its dropout follows this module's mode
        return self

    def forward(self, x_dict, edge_index_dict, gcn_first_mean=False):
        h = self.inputs(x_dict)
        off, start = {}, 0
        for t in self.node_types:
            off[t], start = start, start + h[t].size(0)
        x = torch.cat([h[t] for t in self.node_types])
        ei = torch.cat([torch.stack([e[0] + off[s_], e[1] + off[d]])
                        for (s_, rel, d) in self.edge_types for e in [edge_index_dict[(s_, rel, d)]]], dim=1)
        gnn = self.gnn[0]
        # mpignn's GCN normalises its first layer by 1/d_i (see gcn_first_layer_mean).
        out = gcn_first_layer_mean(gnn, x, ei) if gcn_first_mean else gnn(x, ei)
        return {t: out[off[t]:off[t] + h[t].size(0)] for t in self.node_types}


class LinkPredictor(torch.nn.Module):
    """OGB's LinkPredictor (examples/linkproppred) with two layers, mpignn's
    --decoder mlp: logit(u, v) = lins[1](relu(lins[0](h_u * h_v))); OGB's
    forward returns its sigmoid (mpignn's prob column)."""

    def __init__(self, in_channels, hidden_channels, out_channels, num_layers, dropout=0.0):
        super().__init__()
        assert num_layers == 2
        self.lins = torch.nn.ModuleList([torch.nn.Linear(in_channels, hidden_channels),
                                         torch.nn.Linear(hidden_channels, out_channels)])

    def logit(self, h_u, h_v):
        return self.lins[1](self.lins[0](h_u * h_v).relu()).squeeze(-1)

    def forward(self, h_u, h_v):
        return torch.sigmoid(self.logit(h_u, h_v))


def check_decoder(state_path, emb_path, scores_path, tol):
    """The link decoder alone: mpignn's node embeddings (mpignn embed) and
    pair scores (mpignn predict --task link) against the exported decoder
    module, built from the sidecar's decoder_kwargs."""
    spec = json.load(open(state_path[: -len(".safetensors")] + ".json"))["model"]
    state = load_safetensors(state_path)
    emb = load_npy(emb_path)
    rows = np.loadtxt(scores_path, delimiter=",", skiprows=1, ndmin=2)
    u, v = torch.from_numpy(rows[:, 0].astype(np.int64)), torch.from_numpy(rows[:, 1].astype(np.int64))
    want = torch.from_numpy(rows[:, 2].astype(np.float32))
    want_prob = torch.from_numpy(rows[:, 3].astype(np.float32))
    with torch.no_grad():
        if spec["decoder"] == "mlp":
            dec = LinkPredictor(**spec["decoder_kwargs"])
            dec.load_state_dict({k[len("decoder."):]: t for k, t in state.items() if k.startswith("decoder.")}, strict=True)
            dec.eval()
            got, prob = dec.logit(emb[u], emb[v]), dec(emb[u], emb[v])
        else:
            got = (emb[u] * emb[v]).sum(-1)
            prob = torch.sigmoid(got)
    diff = max((got - want).abs().max().item(), (prob - want_prob).abs().max().item())
    print(f"decoder {spec['decoder']}: {len(want)} pairs, max abs score/prob difference {diff:.3g} "
          f"(max |score| {want.abs().max().item():.3g})")
    return 0 if diff <= tol else 1


def model_class(name):
    """PyG's class if PyG is installed, else the stand-in of the same name."""
    if "." not in name:  # mpignn's heterogeneous modules, defined above
        return globals()[name], "PyTorch modules of scripts/pyg_check.py"
    try:
        mod, cls = name.rsplit(".", 1)
        return getattr(importlib.import_module(mod), cls), "PyG"
    except ImportError:
        return globals()[name.rsplit(".", 1)[1]], "plain PyTorch"


# ------------------------------------------------------------------- check

class MeanFirstLayer(torch.nn.Module):
    """mpignn's GCN layer 0: the GCNConv with normalize=False over the graph
    with self-loops and edge weights 1/d_dst (the mean over N(i) + {i})."""

    def __init__(self, conv, x, edge_index):
        super().__init__()
        n = x.size(0)
        self.conv, self.ei = conv, with_self_loops(edge_index, n)
        self.w = 1.0 / scatter_sum(torch.ones(self.ei.size(1)), self.ei[1], n)[self.ei[1]]

    def forward(self, x, edge_index, **kwargs):
        self.conv.normalize = False
        try:
            return self.conv(x, self.ei, self.w)
        finally:
            self.conv.normalize = True


def gcn_first_layer_mean(model, x, edge_index):
    """mpignn's GCN: layer 0 with weights 1/d_dst over the graph with
    self-loops (normalize=False), the other layers as GCNConv, through the
    model's own forward (norms, residuals, jk and lin included)."""
    conv0 = model.convs[0]
    model.convs[0] = MeanFirstLayer(conv0, x, edge_index)
    try:
        return model(x, edge_index)
    finally:
        model.convs[0] = conv0


def main():
    warnings.filterwarnings("ignore", message="scatter_reduce")  # beta in torch 1.13, used by the GAT stand-in
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="dataset directory (OGB raw layout)")
    ap.add_argument("--state", required=True, nargs="+", help="FILE.safetensors from mpignn export (FILE.json beside it)")
    ap.add_argument("--logits", nargs="+", default=[], help="mpignn predict --logits output (.npy), one per --state")
    ap.add_argument("--tol", type=float, default=1e-4)
    ap.add_argument("--label-type", default="", help="heterogeneous: the node type predict scored (default: the labelled one)")
    ap.add_argument("--embeddings", help="link model: mpignn embed output (.npy); with --scores checks the decoder only")
    ap.add_argument("--scores", help="link model: mpignn predict --task link output (src,dst,score,prob)")
    ap.add_argument("--make-random", metavar="OUT.safetensors",
                    help="write a randomly initialised model like --state's (OUT.json beside it), as a PyG user would, "
                         "GATConv under PyG <= 2.4's names lin_src/lin_dst")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target-loss", choices=["regression", "multilabel", "edge"],
                    help="real-target model: print the loss of the full-graph outputs on --split's training nodes "
                         "(PyTorch's MSELoss / BCEWithLogitsLoss; unlabelled (NaN) values add 0 and the sum is "
                         "divided by nodes x targets, mpignn's rule) as JSON, instead of comparing logits")
    ap.add_argument("--split", default="random", help="with --target-loss: the split whose train nodes are scored")
    ap.add_argument("--pairs", help="with --target-loss edge: the training edges (mpignn inspect --link-pairs train)")
    ap.add_argument("--graph", metavar="G.safetensors",
                    help="instead of --data: a small graph with edge features (tensors x, edge_index, edge_attr, "
                         "and mpignn's logits), as train's library tests write it; compares --state's logits on it")
    ap.add_argument("--gcn-norm", default="", choices=["", "sym"],
                    help="sym: the logits come from predict --gcn-norm sym, compare gcn with the pure GCNConv equations")
    a = ap.parse_args()
    if a.make_random:
        return make_random(a.state[0], a.make_random, a.seed)
    if a.graph:
        return check_graph(a)
    if not a.data:
        ap.error("--data is required (or --graph)")
    if a.scores:
        return check_decoder(a.state[0], a.embeddings, a.scores, a.tol)
    if a.target_loss == "edge":
        return edge_loss(a)
    if a.target_loss:
        return target_loss(a)
    if len(a.state) != len(a.logits):
        ap.error("give one --logits file per --state file")
    graph = {}  # the dataset, read once for every model
    status = 0
    for state, logits in zip(a.state, a.logits):
        status |= check(a, state, logits, graph)
    return status


def make_random(like, out, seed):
    spec = json.load(open(like[: -len(".safetensors")] + ".json"))
    cls, _ = model_class(spec["model"]["class"])
    torch.manual_seed(seed)
    model = cls(**spec["model"]["kwargs"])
    state = {}
    buffers = {k for k, _ in model.named_buffers()}
    for k, v in model.state_dict().items():
        if k not in buffers:  # a buffer (GINConv's eps without train_eps) keeps the value it was built with
            v = torch.randn(v.shape) * 0.3  # biases too, so that every tensor's place is checked
        if k.endswith(".lin.weight") and spec["mpignn_arch"] == "gat":
            state[k[: -len("lin.weight")] + "lin_src.weight"] = v
            state[k[: -len("lin.weight")] + "lin_dst.weight"] = v
        else:
            state[k] = v
    save_safetensors(out, dict(reversed(list(state.items()))))
    spec["state_dict"] = out.rsplit("/", 1)[-1]
    json.dump(spec, open(out[: -len(".safetensors")] + ".json", "w"), indent=2)
    print(f"wrote {out}: {len(state)} tensors")
    return 0


def fold_lin_src(state):
    """PyG <= 2.4 names GATConv's projection lin_src (lin_dst the same
    module); later versions lin."""
    for k in [k for k in state if k.endswith(".lin_src.weight")]:
        state[k.replace(".lin_src.", ".lin.")] = state.pop(k)
        state.pop(k.replace(".lin_src.", ".lin_dst."), None)
    return state


def check(a, state_path, logits_path, graph):
    # The lines of docs/python.md, "Using a trained model from Python":
    spec = json.load(open(state_path[: -len(".safetensors")] + ".json"))
    cls, impl = model_class(spec["model"]["class"])
    model = cls(**spec["model"]["kwargs"])
    state = fold_lin_src(load_safetensors(state_path))
    model.load_state_dict({k: v for k, v in state.items() if not k.startswith("decoder.")}, strict=True)
    model.eval()

    def row_normalize(x):
        return x / x.abs().sum(1, keepdim=True).clamp(min=1e-30) if spec["row_normalize"] else x

    want = load_npy(logits_path)
    hgb = spec["model"]["class"] == "HGBHomogeneous"
    if spec["mpignn_arch"] in ("hsage", "rgcn") or hgb:
        if "hetero" not in graph:
            graph["hetero"] = read_ogb_hetero(a.data)
        num, xs, edges, labelled = graph["hetero"]
        label_type = a.label_type or labelled[0]
        x_dict = {t: row_normalize(v) for t, v in xs.items()}
        args = (edges,)
        if spec["model"]["kwargs"].get("edge_dim"):
            if "hetero_attrs" not in graph:
                graph["hetero_attrs"] = read_hetero_edge_attrs(a.data, num)
            e2, attrs, names = graph["hetero_attrs"]
            assert len(names) == spec["model"]["kwargs"]["edge_dim"], f"edge attributes {names} for edge_dim {spec['model']['kwargs']['edge_dim']}"
            args = (e2, attrs)
        with torch.no_grad():
            if hgb:
                impl = f"{impl}, convs {model_class(spec['model']['kwargs']['conv'])[1]}"
                first_mean = spec["mpignn_arch"] == "gcn" and a.gcn_norm != "sym"
                got = model(x_dict, edges, gcn_first_mean=first_mean)[label_type]
            else:
                got = model(x_dict, *args)[label_type]
        return report(spec, impl, got, want, a.tol, f"{label_type} nodes")

    if "homo" not in graph:
        graph["homo"] = read_ogb_graph(a.data)
    x, edge_index = graph["homo"]
    x = row_normalize(x)
    with torch.no_grad():
        if spec["mpignn_arch"] == "gcn" and a.gcn_norm == "sym":
            got = model(x, edge_index)  # GCNConv on every layer, mpignn's --gcn-norm sym
        elif spec["mpignn_arch"] == "gcn":
            pure = model(x, edge_index)
            got = gcn_first_layer_mean(model, x, edge_index)
            same = (pure.argmax(1) == want.argmax(1)).float().mean().item()
            print(f"gcn: pure GCNConv equations differ by up to {(pure - want).abs().max().item():.3g}, "
                  f"arg-max agreement {same:.4f} (mpignn's first layer is the mean over N(i)+{{i}})")
        else:
            got = model(x, edge_index)
    return report(spec, impl, got, want, a.tol, "nodes")


def check_graph(a):
    """Every --state model on the --graph file's graph, edge features
    included: its logits against mpignn's (library tests, train/pyg_torch_test.go)."""
    g = load_safetensors(a.graph)
    x, edge_index, edge_attr = g["x"], g["edge_index"].long(), g.get("edge_attr")
    status = 0
    for state_path in a.state:
        spec = json.load(open(state_path[: -len(".safetensors")] + ".json"))
        cls, impl = model_class(spec["model"]["class"])
        model = cls(**spec["model"]["kwargs"])
        model.load_state_dict(load_safetensors(state_path), strict=True)
        model.eval()
        with torch.no_grad():
            got = model(x, edge_index, edge_attr=edge_attr) if "edge_dim" in spec["model"]["kwargs"] else model(x, edge_index)
        status |= report(spec, impl, got, g[state_path.rsplit("/", 1)[-1][: -len(".safetensors")] + ".logits"], a.tol, "nodes")
    return status


def target_loss(a):
    """The loss of an exported real-target model's full-graph outputs on the
    split's training nodes, computed in plain PyTorch."""
    spec = json.load(open(a.state[0][: -len(".safetensors")] + ".json"))
    cls, impl = model_class(spec["model"]["class"])
    model = cls(**spec["model"]["kwargs"])
    model.load_state_dict(fold_lin_src(load_safetensors(a.state[0])), strict=True)
    model.eval()
    x, edge_index = read_ogb_graph(a.data)
    if spec["row_normalize"]:
        x = x / x.abs().sum(1, keepdim=True).clamp(min=1e-30)
    y = torch.from_numpy(read_csv(f"{a.data}/raw/node-label.csv.gz", np.float32)).reshape(x.size(0), -1)
    train = torch.from_numpy(read_csv(f"{a.data}/split/{a.split}/train.csv.gz", np.int64)).reshape(-1)
    with torch.no_grad():
        z = model(x, edge_index).double()[train]
    t = y.double()[train]
    lab = ~torch.isnan(t)
    loss_fn = F.mse_loss if a.target_loss == "regression" else F.binary_cross_entropy_with_logits
    loss = loss_fn(z[lab], t[lab], reduction="sum") / t.numel()
    print(json.dumps({"loss": loss.item(), "nodes": int(train.numel()), "impl": impl}))
    return 0


def edge_loss(a):
    """The first step's loss of an exported edge predictor (mpignn train
    --task edge) over every training edge of --pairs, in plain PyTorch. A
    step leaves its own edges out of message passing, and a step over every
    training edge leaves none of the training graph, so the encoder runs on
    the nodes' own rows (an empty edge_index). An edge's label is that of the
    first line of raw/edge.csv.gz listing its pair, in either direction
    (docs/edge-tasks.md); the loss is softmax cross-entropy (classes) or the
    squared errors of the labelled values over edges x K (values)."""
    spec = json.load(open(a.state[0][: -len(".safetensors")] + ".json"))
    cls, impl = model_class(spec["model"]["class"])
    model = cls(**spec["model"]["kwargs"])
    state = load_safetensors(a.state[0])
    model.load_state_dict({k: v for k, v in state.items() if not k.startswith("decoder.")}, strict=True)
    dec = LinkPredictor(**spec["model"]["decoder_kwargs"])
    dec.load_state_dict({k[len("decoder."):]: t for k, t in state.items() if k.startswith("decoder.")}, strict=True)
    model.eval()
    dec.eval()
    x = torch.from_numpy(read_csv(f"{a.data}/raw/node-feat.csv.gz", np.float32))
    if spec["row_normalize"]:
        x = x / x.abs().sum(1, keepdim=True).clamp(min=1e-30)
    lines = read_csv(f"{a.data}/raw/edge.csv.gz", np.int64).reshape(-1, 2)
    labels = read_csv(f"{a.data}/raw/edge-label.csv.gz", np.float32).reshape(len(lines), -1)
    first = {}
    for i, (u, v) in enumerate(lines):
        first.setdefault((min(u, v), max(u, v)), i)
    rows = np.loadtxt(a.pairs, delimiter=",", skiprows=1, usecols=(0, 1), dtype=np.int64, ndmin=2)
    y = torch.from_numpy(np.stack([labels[first[(min(u, v), max(u, v))]] for u, v in rows])).double()
    with torch.no_grad():
        h = model(x, torch.empty(2, 0, dtype=torch.long))
        z = dec.lins[1](dec.lins[0](h[rows[:, 0]] * h[rows[:, 1]]).relu()).double()
    if spec["mpignn_config"].get("targets") == "regression":
        lab = ~torch.isnan(y)
        loss = F.mse_loss(z[lab], y[lab], reduction="sum") / y.numel()
    else:
        loss = F.cross_entropy(z, y[:, 0].long(), reduction="mean")
    print(json.dumps({"loss": loss.item(), "edges": int(len(rows)), "impl": impl}))
    return 0


def model_label(spec):
    """The model's name in the difference line: the architecture, with a
    GraphSAGE's aggregator unless it is mean (sage-max, sage-sum, sage-pool
    for SAGEConv(aggr="max", project=True))."""
    kw = spec["model"]["kwargs"]
    if spec["mpignn_arch"] != "sage" or kw.get("aggr", "mean") == "mean":
        return spec["mpignn_arch"]
    return "sage-pool" if kw.get("project") else "sage-" + kw["aggr"]


def report(spec, impl, got, want, tol, what):
    if got.shape != want.shape:
        print(f"shape mismatch: PyTorch {tuple(got.shape)}, mpignn {tuple(want.shape)}")
        return 1
    diff = (got - want).abs().max().item()
    agree = (got.argmax(1) == want.argmax(1)).float().mean().item()
    print(f"{model_label(spec)}: {spec['model']['class']} ({impl}), {got.size(0)} {what}, "
          f"max abs logit difference {diff:.3g} (max |logit| {want.abs().max().item():.3g}), arg-max agreement {agree:.4f}")
    return 0 if diff <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
