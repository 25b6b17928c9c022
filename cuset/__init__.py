"""The CuSeT trainer, its baselines, pass@k evaluation and token-confidence analysis."""
