#!/usr/bin/env python3
"""Recompute the edge task's reported test figure from predict's output.

usage: edge_check.py DATASET PRED.csv

DATASET is the OGB raw layout the partition was made from (raw/edge.csv.gz
and raw/edge-label.csv.gz); PRED.csv is `predict --task edge`'s output. An
edge's label is that of the first line of edge.csv.gz listing its pair in
either direction (the partitioner's rule for a random split; a time
split's directed events are not checked here). Prints "rmse R mae M" (real
values: over every labelled value) or "acc A f1_macro F" (classes: over
labelled edges) for the test edges, in numpy, independently of mpignn's code.
"""
import csv
import gzip
import sys

import numpy as np


def main():
    data, pred = sys.argv[1], sys.argv[2]
    edges = np.loadtxt(gzip.open(f"{data}/raw/edge.csv.gz", "rt"), delimiter=",", dtype=np.int64, ndmin=2)
    with gzip.open(f"{data}/raw/edge-label.csv.gz", "rt") as f:
        labels = np.array([[float(x) if x.strip() not in ("", "nan", "NaN") else np.nan for x in line.strip().split(",")]
                           for line in f], dtype=np.float64)
    first = {}
    for i, (u, v) in enumerate(edges):
        key = (min(u, v), max(u, v))
        if u != v and key not in first:
            first[key] = i
    with open(pred) as f:
        rows = list(csv.reader(f))
    header, rows = rows[0], [r for r in rows[1:] if r[2] == "test"]
    y = np.array([labels[first[(min(int(r[0]), int(r[1])), max(int(r[0]), int(r[1])))]] for r in rows])
    if header[3] == "class":
        z = np.array([int(r[3]) for r in rows])
        lab = ~np.isnan(y[:, 0])
        t, p = y[lab, 0].astype(np.int64), z[lab]
        # Macro F1 over the classes in the labels or the predictions
        # (scikit-learn's f1_score(average="macro")).
        f1 = [2 * np.sum((p == c) & (t == c)) / (np.sum(p == c) + np.sum(t == c)) for c in np.union1d(t, p)]
        print(f"acc {np.mean(p == t):.9f} f1_macro {np.mean(f1):.9f}")
        return
    # The predictions are float32 as written; the figures in float64.
    z = np.array([[float(np.float32(x)) for x in r[3:]] for r in rows])
    lab = ~np.isnan(y)
    d = z[lab] - y[lab].astype(np.float32).astype(np.float64)
    print(f"rmse {np.sqrt(np.mean(d * d)):.9f} mae {np.mean(np.abs(d)):.9f}")


if __name__ == "__main__":
    main()
