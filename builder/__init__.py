"""The dataset pipeline: stages, orchestration, caching, shards, publishing."""
