"""Closed-chain dynamics. Constraint embedding (seed 004; seed 002 §5–6): body clusters,
cluster joints and the cluster algorithms C-RNEA, C-ABA and C-EFPA."""
