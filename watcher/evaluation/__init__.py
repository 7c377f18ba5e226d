"""Self-evaluation: matching results to labels, the figures (precision, recall, F1, AUC), grouped
cross-validation by TimeMap, the results files and the floors gate, threshold tuning, and the
``driftline eval``/``tune`` commands."""
