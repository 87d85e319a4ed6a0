#!/usr/bin/env python3
"""Recompute a real-target run's test figures outside mpignn.

Reads `mpignn predict --task multilabel|regression` output (.npy, one row
per node in original-id order), the dataset's node-label.csv.gz and its test
split, and prints the figures as JSON: for multilabel OGB's ogbn-proteins
ROC-AUC (scikit-learn's roc_auc_score per task with both classes, over the
labelled nodes, averaged), for regression RMSE and MAE over every labelled
value (numpy).
"""
import argparse
import json

import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("--pred", required=True)
ap.add_argument("--data", required=True)
ap.add_argument("--split", default="random")
ap.add_argument("--kind", choices=["multilabel", "regression"], required=True)
a = ap.parse_args()

pred = np.load(a.pred).astype(np.float64)
y = np.loadtxt(f"{a.data}/raw/node-label.csv.gz", delimiter=",", ndmin=2)
test = np.loadtxt(f"{a.data}/split/{a.split}/test.csv.gz", dtype=np.int64, ndmin=1)
p, t = pred[test], y[test]
out = {"nodes": int(len(test))}
if a.kind == "multilabel":
    from sklearn.metrics import roc_auc_score

    aucs = []
    for i in range(t.shape[1]):
        # OGB's rule: a task counts when it has both classes among the
        # labelled nodes.
        if np.sum(t[:, i] == 1) > 0 and np.sum(t[:, i] == 0) > 0:
            lab = t[:, i] == t[:, i]
            aucs.append(roc_auc_score(t[lab, i], p[lab, i]))
    out["rocauc"] = float(np.mean(aucs))
else:
    lab = ~np.isnan(t)
    d = p[lab] - t[lab]
    out["rmse"] = float(np.sqrt(np.mean(d * d)))
    out["mae"] = float(np.mean(np.abs(d)))
print(json.dumps(out))
