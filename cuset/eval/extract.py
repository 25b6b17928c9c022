"""The program in a completion: `validators.extract`, kept here so that existing imports of
`cuset.eval.extract` keep working (the service must not import cuset, so the code lives there)."""

from validators.extract import LANGUAGE_NAMES, extract_program, extract_python, fenced_blocks

__all__ = ["LANGUAGE_NAMES", "extract_program", "extract_python", "fenced_blocks"]
