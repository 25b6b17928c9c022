"""The stage cache and `apply_stage`: reuse, damaged entries, stages that raise."""

from __future__ import annotations

from builder_helpers import make_raw, scale_program

from builder.cache import StageCache
from builder.item import Envelope, Item
from builder.stages import Extract
from builder.stages.base import Stage, apply_stage


class Counting(Stage):
    """Upper-cases the record's meta; counts how often it really ran."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def process(self, item: Item) -> Item:
        self.calls += 1
        item.raw.meta["seen"] = str(self.calls)
        return item


class Exploding(Stage):
    name = "exploding"

    def process(self, item: Item) -> Item:
        raise ZeroDivisionError("division by zero in a hostile record")


def env(rid: str = "r1") -> Envelope:
    return Envelope(item=Item(raw=make_raw(rid, scale_program())))


def test_second_run_comes_from_the_cache(tmp_path):
    cache, stage = StageCache(tmp_path), Counting()
    first = apply_stage(stage, env(), cache)
    second = apply_stage(stage, env(), cache)
    assert stage.calls == 1
    assert not first.events[-1].cached and second.events[-1].cached
    assert second.item == first.item
    # A different input is a different key.
    apply_stage(stage, env("r2"), cache)
    assert stage.calls == 2


def test_config_change_invalidates(tmp_path):
    cache = StageCache(tmp_path)
    apply_stage(Extract(), env(), cache)
    assert apply_stage(Extract(), env(), cache).events[-1].cached
    from builder.stages import DedupConfig

    other = Extract(DedupConfig(num_perm=64))
    out = apply_stage(other, env(), cache)
    assert not out.events[-1].cached and len(out.item.minhash) == 64


def test_corrupted_entry_is_discarded_and_recomputed(tmp_path):
    cache, stage = StageCache(tmp_path), Counting()
    good = apply_stage(stage, env(), cache)
    (entry,) = cache.entries("counting")
    data = bytearray(entry.read_bytes())
    data[-5] ^= 0x55  # flip bits in the body: checksum no longer matches
    entry.write_bytes(bytes(data))
    again = apply_stage(stage, env(), cache)
    ev = again.events[-1]
    assert stage.calls == 2
    assert ev.cache_discarded and not ev.cached and "checksum" in ev.note
    assert good.item.raw.meta["seen"] == "1" and again.item.raw.meta["seen"] == "2"
    # The recomputed entry is whole again.
    assert apply_stage(stage, env(), cache).events[-1].cached


def test_truncated_and_unparsable_entries(tmp_path):
    cache, stage = StageCache(tmp_path), Counting()
    apply_stage(stage, env(), cache)
    (entry,) = cache.entries("counting")
    entry.write_bytes(entry.read_bytes()[:40])
    assert apply_stage(stage, env(), cache).events[-1].cache_discarded
    # A checksum-valid entry that does not parse as an item (an incompatible writer).
    (entry,) = cache.entries("counting")
    key = entry.name
    cache.put("counting", key, '{"not": "an item"}')
    out = apply_stage(stage, env(), cache)
    assert out.events[-1].cache_discarded and out.item.alive and stage.calls == 3


def test_a_stage_that_raises_rejects_only_that_record(tmp_path):
    cache = StageCache(tmp_path)
    out = apply_stage(Exploding(), env(), cache)
    rej = out.item.rejection
    assert rej.stage == "exploding"
    assert rej.reason == "stage_error:exploding"
    assert rej.message().startswith("stage_error:exploding: ZeroDivisionError: division by zero")
    assert cache.entries("exploding") == []  # errors are retried on the next run, not cached
    # A rejected record passes later stages untouched.
    stage = Counting()
    assert apply_stage(stage, out, cache).item == out.item and stage.calls == 0


def test_a_result_the_stage_refuses_to_keep_is_computed_again(tmp_path):
    """Validate does not keep timeouts (they may be the machine's load): same mechanism."""

    class Moody(Counting):
        name = "moody"

        def keep(self, result: Item) -> bool:
            return result.raw.meta["seen"] != "1"

    cache, stage = StageCache(tmp_path), Moody()
    assert not apply_stage(stage, env(), cache).events[-1].cached
    assert not apply_stage(stage, env(), cache).events[-1].cached  # the first was not kept
    assert apply_stage(stage, env(), cache).events[-1].cached  # the second was
    assert stage.calls == 2


def test_validate_keeps_verdicts_but_not_timeouts():
    from builder.stages import Validate
    from schemas import Status, ValidationResult

    item = Item(raw=make_raw("r1", scale_program()))
    stage = Validate("cpu")
    assert stage.keep(item)
    for status, kept in ((Status.FAILED, True), (Status.PASSED, True), (Status.TIMEOUT, False)):
        item.validation = ValidationResult(status=status, backend="cpu")
        assert stage.keep(item) is kept, status


def test_clear_drops_only_the_named_stages(tmp_path):
    cache = StageCache(tmp_path)
    apply_stage(Counting(), env(), cache)
    (tmp_path / "notes.txt").write_text("the user's")
    (tmp_path / "mine").mkdir()
    cache.clear(["counting", "validate"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "notes.txt"]
