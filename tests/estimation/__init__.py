"""Estimation and evaluation: totals, intervals, metric declarations, held-out workloads."""
