"""The sampling machinery: strata, allocation, two-means, grouping, representatives, draws, BBVs, the estimator and the
evaluation."""
