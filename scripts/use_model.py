#!/usr/bin/env python3
"""use_model.py: run a model that `mpignn export` wrote, in PyTorch, on a
dataset in the OGB raw layout: docs/python.md ("Using a trained model from
Python") as a script that runs as written.

    python3 scripts/use_model.py --state model.safetensors --data ../shared/data/cora \
        [--logits logits.npy] [--out torch-logits.npy]

It builds the model from FILE.json's class and keyword arguments (PyG's
class when torch_geometric is installed, else the stand-in of the same name
in scripts/pyg_check.py, which has PyG's names and equations), loads the
state dict (safetensors' own loader when installed, else pyg_check.py's
json + numpy one), reads the node features and edges as mpignn does, and
prints the logits' shape and predicted classes. With --logits (from
`mpignn predict --logits`) it compares them and exits 1 when they differ by
more than --tol.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyg_check  # noqa: E402  (the loaders and the PyG stand-ins)

try:
    from safetensors.torch import load_file
except ImportError:  # the package is optional: the format is a JSON header and raw float32s
    load_file = pyg_check.load_safetensors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--state", required=True, help="FILE.safetensors from mpignn export (FILE.json beside it)")
    ap.add_argument("--data", required=True, help="the dataset directory (OGB raw layout) the model was trained on")
    ap.add_argument("--logits", help="mpignn predict --logits output (.npy) to compare with")
    ap.add_argument("--out", help="write PyTorch's logits here (.npy)")
    ap.add_argument("--tol", type=float, default=1e-4, help="largest allowed abs difference from --logits")
    a = ap.parse_args()

    spec = json.load(open(a.state[: -len(".safetensors")] + ".json"))
    cls, impl = pyg_check.model_class(spec["model"]["class"])  # hsage/rgcn: HeteroSAGE, RGCN of pyg_check.py
    model = cls(**spec["model"]["kwargs"])
    state = load_file(a.state)
    model.load_state_dict({k: v for k, v in state.items() if not k.startswith("decoder.")}, strict=True)
    model.eval()

    def row_normalize(x):  # train --norm-feat (the default for node tasks)
        return x / x.abs().sum(1, keepdim=True).clamp(min=1e-30) if spec["row_normalize"] else x

    with torch.no_grad():
        if spec["mpignn_arch"] in ("hsage", "rgcn"):
            # heterogeneous: model(x_dict, edge_index_dict)[label_type], reverse relations added (rev_<rel>)
            _, xs, edges, labelled = pyg_check.read_ogb_hetero(a.data)
            logits = model({t: row_normalize(x) for t, x in xs.items()}, edges)[labelled[0]]
        else:
            # edge_index: every edge in both directions, no self-loops, no repeats (as mpignn reads it)
            x, edge_index = pyg_check.read_ogb_graph(a.data)
            x = row_normalize(x)
            if spec["mpignn_arch"] == "gcn":
                # mpignn's first GCN layer is the mean over in-neighbours and self (docs/models.md)
                logits = pyg_check.gcn_first_layer_mean(model, x, edge_index)
            else:
                logits = model(x, edge_index)
    pred = logits.argmax(1)
    print(f"{spec['model']['class']} ({impl}): logits {tuple(logits.shape)}, "
          f"predicted classes of the first nodes {pred[:10].tolist()}")
    if a.out:
        np.save(a.out, logits.numpy())
    if a.logits:
        want = torch.from_numpy(np.load(a.logits))
        diff = (logits - want).abs().max().item()
        print(f"max abs difference from {a.logits}: {diff:.3g} (tolerance {a.tol:g})")
        return 0 if diff <= a.tol else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
