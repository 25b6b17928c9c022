"""The builder's fresh seeds: secret, stable for one build (resume), shared only by choice."""

from __future__ import annotations

import os

import pytest

from builder.stages.validate import fresh_seed, seed_key


def test_key_is_created_once_and_private(tmp_path, monkeypatch):
    monkeypatch.delenv("CKD_FRESH_SEED_KEY", raising=False)
    a = seed_key(tmp_path / "cache")
    assert seed_key(tmp_path / "cache") == a  # a resumed build reuses it
    assert seed_key(tmp_path / "other") != a  # another build draws its own
    assert os.stat(tmp_path / "cache" / "fresh-seed.key").st_mode & 0o077 == 0


def test_env_key_and_derivation(tmp_path, monkeypatch):
    monkeypatch.setenv("CKD_FRESH_SEED_KEY", "ab" * 32)
    assert seed_key(tmp_path / "x") == bytes.fromhex("ab" * 32) == seed_key(tmp_path / "y")
    k = seed_key(tmp_path / "x")
    s1, s2 = fresh_seed(k, '{"task": 1}'), fresh_seed(k, '{"task": 2}')
    assert s1 != s2 and 0 <= s1 < 2**31 and fresh_seed(k, '{"task": 1}') == s1
    assert fresh_seed(b"other", '{"task": 1}') != s1
    monkeypatch.setenv("CKD_FRESH_SEED_KEY", "not hex")
    with pytest.raises(ValueError, match="CKD_FRESH_SEED_KEY"):
        seed_key(tmp_path / "z")
