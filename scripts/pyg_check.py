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

- SAGEConv (aggr mean):  out_i = lin_l(mean_{j in N(i)} x_j) + lin_r(x_i)
- GCNConv:  out = D^-1/2 (A + I) D^-1/2 lin(x) + bias, D the in-degree + 1
- GATConv:  z = lin(x) viewed (N, H, C); e_ij = LeakyReLU_0.2(<att_src, z_j>
  + <att_dst, z_i>); alpha = softmax over j in N(i) + {i}; heads
  concatenated (hidden layers) or averaged (last layer), then + bias.

mpignn's GCN normalises its FIRST layer by 1/d_i (the mean over in-neighbours
and self) instead of 1/sqrt(d_i d_j) (README, "Using a trained model from
Python"); the sidecar says so, and this script reproduces it the way a PyG
user would: layer 0 with normalize=False and edge weights 1/d_dst over the
graph with self-loops. It prints the max abs difference against the pure
GCNConv equations too.

Exit status 0 when the max abs logit difference is at most --tol.
"""
import argparse
import gzip
import importlib
import json
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


def load_npy(path):
    return torch.from_numpy(np.load(path))


def read_ogb_graph(root):
    """Features and edge_index of a dataset in the OGB raw layout, as mpignn
    reads it: every edge in both directions, self-loops dropped, duplicates
    removed (PyG: ToUndirected + RemoveSelfLoops)."""
    with gzip.open(f"{root}/raw/node-feat.csv.gz", "rt") as f:
        x = torch.from_numpy(np.loadtxt(f, delimiter=",", dtype=np.float32, ndmin=2))
    with gzip.open(f"{root}/raw/edge.csv.gz", "rt") as f:
        e = torch.from_numpy(np.loadtxt(f, delimiter=",", dtype=np.int64, ndmin=2)).t()
    e = torch.cat([e, e.flip(0)], dim=1)
    e = e[:, e[0] != e[1]]
    e = torch.unique(e, dim=1)  # sorted, no repeats
    return x, e


# ------------------------------------- PyG's layers in plain PyTorch (stand-in)

def scatter_sum(src, index, n):
    out = torch.zeros((n,) + src.shape[1:], dtype=src.dtype)
    return out.index_add_(0, index, src)


def with_self_loops(edge_index, n):
    loops = torch.arange(n).repeat(2, 1)
    return torch.cat([edge_index[:, edge_index[0] != edge_index[1]], loops], dim=1)


class SAGEConv(torch.nn.Module):
    def __init__(self, in_channels, out_channels, aggr="mean"):
        super().__init__()
        assert aggr == "mean"
        self.lin_l = torch.nn.Linear(in_channels, out_channels, bias=True)
        self.lin_r = torch.nn.Linear(in_channels, out_channels, bias=False)

    def forward(self, x, edge_index):
        src, dst = edge_index
        n = x.size(0)
        cnt = scatter_sum(torch.ones(src.numel()), dst, n).clamp(min=1)
        agg = scatter_sum(x[src], dst, n) / cnt.unsqueeze(1)
        return self.lin_l(agg) + self.lin_r(x)


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
    def __init__(self, in_channels, out_channels, heads=1, concat=True, dropout=0.0):
        super().__init__()
        self.heads, self.out_channels, self.concat = heads, out_channels, concat
        self.lin = torch.nn.Linear(in_channels, heads * out_channels, bias=False)
        self.att_src = torch.nn.Parameter(torch.zeros(1, heads, out_channels))
        self.att_dst = torch.nn.Parameter(torch.zeros(1, heads, out_channels))
        self.bias = torch.nn.Parameter(torch.zeros(heads * out_channels if concat else out_channels))

    def forward(self, x, edge_index):
        n, H, C = x.size(0), self.heads, self.out_channels
        src, dst = with_self_loops(edge_index, n)
        z = self.lin(x).view(n, H, C)
        a_src = (z * self.att_src).sum(-1)
        a_dst = (z * self.att_dst).sum(-1)
        e = F.leaky_relu(a_src[src] + a_dst[dst], 0.2)  # (E, H)
        e_max = torch.full((n, H), -float("inf")).scatter_reduce(0, dst.unsqueeze(1).expand(-1, H), e, "amax")
        w = (e - e_max[dst]).exp()
        alpha = w / scatter_sum(w, dst, n)[dst]
        out = scatter_sum(alpha.unsqueeze(-1) * z[src], dst, n)
        out = out.reshape(n, H * C) if self.concat else out.mean(dim=1)
        return out + self.bias


class BasicGNN(torch.nn.Module):
    """torch_geometric.nn.models.BasicGNN with out_channels set, jk=None,
    norm=None, act=relu: conv, ReLU, dropout, ..., conv."""

    def __init__(self, in_channels, hidden_channels, num_layers, out_channels, dropout=0.0, **kwargs):
        super().__init__()
        self.dropout = dropout
        self.convs = torch.nn.ModuleList()
        for l in range(num_layers):
            i = in_channels if l == 0 else hidden_channels
            o = out_channels if l == num_layers - 1 else hidden_channels
            self.convs.append(self.init_conv(i, o, last=l == num_layers - 1, **kwargs))

    def forward(self, x, edge_index):
        for l, conv in enumerate(self.convs):
            x = conv(x, edge_index)
            if l < len(self.convs) - 1:
                x = F.dropout(F.relu(x), self.dropout, self.training)
        return x


class GraphSAGE(BasicGNN):
    def init_conv(self, i, o, last, aggr="mean"):
        return SAGEConv(i, o, aggr=aggr)


class GCN(BasicGNN):
    def init_conv(self, i, o, last):
        return GCNConv(i, o)


class GAT(BasicGNN):
    def init_conv(self, i, o, last, heads=1):
        if last:  # the conv to out_channels averages its heads
            return GATConv(i, o, heads=heads, concat=False)
        return GATConv(i, o // heads, heads=heads, concat=True)


def model_class(name):
    """PyG's class if PyG is installed, else the stand-in of the same name."""
    try:
        mod, cls = name.rsplit(".", 1)
        return getattr(importlib.import_module(mod), cls), "PyG"
    except ImportError:
        return globals()[name.rsplit(".", 1)[1]], "plain PyTorch"


# ------------------------------------------------------------------- check

def gcn_first_layer_mean(model, x, edge_index):
    """mpignn's GCN: layer 0 with weights 1/d_dst over the graph with
    self-loops (normalize=False), the other layers as GCNConv."""
    n = x.size(0)
    ei = with_self_loops(edge_index, n)
    deg = scatter_sum(torch.ones(ei.size(1)), ei[1], n)
    conv0 = model.convs[0]
    conv0.normalize = False
    h = conv0(x, ei, 1.0 / deg[ei[1]])
    conv0.normalize = True
    for conv in model.convs[1:]:
        h = conv(F.relu(h), edge_index)
    return h


def main():
    warnings.filterwarnings("ignore", message="scatter_reduce")  # beta in torch 1.13, used by the GAT stand-in
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="dataset directory (OGB raw layout)")
    ap.add_argument("--state", required=True, help="FILE.safetensors from mpignn export (FILE.json beside it)")
    ap.add_argument("--logits", required=True, help="mpignn predict --logits output (.npy)")
    ap.add_argument("--tol", type=float, default=1e-4)
    a = ap.parse_args()

    # The lines of README "Using a trained model from Python":
    spec = json.load(open(a.state[: -len(".safetensors")] + ".json"))
    cls, impl = model_class(spec["model"]["class"])
    model = cls(**spec["model"]["kwargs"])
    state = load_safetensors(a.state)
    model.load_state_dict({k: v for k, v in state.items() if not k.startswith("decoder.")}, strict=True)
    model.eval()

    x, edge_index = read_ogb_graph(a.data)
    if spec["row_normalize"]:
        x = x / x.abs().sum(1, keepdim=True).clamp(min=1e-30)
    want = load_npy(a.logits)
    with torch.no_grad():
        if spec["mpignn_arch"] == "gcn":
            pure = model(x, edge_index)
            got = gcn_first_layer_mean(model, x, edge_index)
            print(f"gcn: pure GCNConv equations differ by up to {(pure - want).abs().max().item():.3g} "
                  f"(mpignn's first layer is the mean over N(i)+{{i}})")
        else:
            got = model(x, edge_index)
    if got.shape != want.shape:
        print(f"shape mismatch: PyTorch {tuple(got.shape)}, mpignn {tuple(want.shape)}")
        return 1
    diff = (got - want).abs().max().item()
    agree = (got.argmax(1) == want.argmax(1)).float().mean().item()
    print(f"{spec['mpignn_arch']}: {spec['model']['class']} ({impl}), {x.size(0)} nodes, "
          f"max abs logit difference {diff:.3g} (max |logit| {want.abs().max().item():.3g}), arg-max agreement {agree:.4f}")
    return 0 if diff <= a.tol else 1


if __name__ == "__main__":
    sys.exit(main())
