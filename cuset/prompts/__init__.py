"""Versioned prompts of `cuset` (a package so that wheels carry them)."""
