"""Stop a build whose validator cannot work here, instead of rejecting every record.

When the validator's own machinery fails (the reference harness cannot start its interpreter,
the sandbox cannot be set up), every record ends in the same `error`, and a build that went on
would spend its whole budget to write nothing. `FailFast` watches records as they finish: when
the first `first` of them all failed in our machinery with the same cause, it raises
`BuildError` naming that cause. One such failure among good records is a record's problem and
is left to the filter (`validator_error`, retried on resume).
"""

from __future__ import annotations

import re

from .item import Envelope, Item
from .stages.validate import is_validator_error

FIRST_RECORDS = 8


def infrastructure_cause(item: Item) -> str | None:
    """The cause of a record's failure in our machinery, normalised so that the same cause on
    two records compares equal (case names, numbers and paths removed); None when the record
    was judged (or rejected for its own reasons)."""
    rej = item.rejection
    if rej is not None and rej.reason == "stage_error:validate":
        text = rej.detail
    elif is_validator_error(item.validation):
        text = item.validation.reason  # type: ignore[union-attr]
    else:
        return None
    text = re.sub(r"^case \S+: ", "", text)
    text = re.sub(r"(/[^\s:'\"]+)+", "<path>", text)
    text = re.sub(r"\d+", "N", text)
    return text[:300]


class FailFast:
    """Call with each finished envelope; raises `error(message)` per the module docstring."""

    def __init__(self, error: type[Exception], first: int = FIRST_RECORDS) -> None:
        self.error, self.first = error, first
        self.causes: list[str | None] = []
        self.examples: list[str] = []

    def __call__(self, env: Envelope) -> None:
        if len(self.causes) >= self.first:
            return
        cause = infrastructure_cause(env.item)
        self.causes.append(cause)
        if cause is not None and len(self.examples) < 1:
            v = env.item.validation
            self.examples.append(v.reason if v is not None and v.reason else
                                 (env.item.rejection.detail if env.item.rejection else ""))
        if len(self.causes) == self.first and len(set(self.causes)) == 1 and cause is not None:
            raise self.error(
                f"the validator's own machinery failed on each of the first {self.first} "
                f"records in the same way, so nothing was judged and the build stopped: "
                f"{self.examples[0][:500]} (an environment problem, not the records': fix it "
                f"and run the same command again; finished work is cached)")
