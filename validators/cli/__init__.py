"""`python -m validators`: one module per subcommand, each with `add_parser` and `main`."""

from __future__ import annotations

import argparse
import importlib
import sys

# Subcommand name -> module under validators.cli. A module that is not there yet (or fails to
# import for a missing optional dependency) is reported when used, not at start-up.
SUBCOMMANDS = {
    "inspect": "inspect_cmd",
    "check": "check_cmd",
    "run": "run_cmd",
    "serve": "serve_cmd",
}
# Subcommands whose arguments after `--` belong to the program they run. argparse would drop
# that `--` when options precede PROG, and the program's arguments would then be read as ours.
PASSTHROUGH = {"run"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m validators",
        description="Static analysis, validation and sandboxed execution of CUDA programs.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    handlers = {}
    for name, module in SUBCOMMANDS.items():
        try:
            mod = importlib.import_module(f"validators.cli.{module}")
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("validators.cli."):
                continue
            raise
        mod.add_parser(sub)
        handlers[name] = mod.main
    argv = list(sys.argv[1:] if argv is None else argv)
    tail: list[str] | None = None
    if argv and argv[0] in PASSTHROUGH and "--" in argv:
        cut = argv.index("--")
        argv, tail = argv[:cut], argv[cut + 1 :]
    args = parser.parse_args(argv)
    if tail is not None:
        args.args = [*getattr(args, "args", []), "--", *tail]
    return int(handlers[args.command](args) or 0)


if __name__ == "__main__":
    sys.exit(main())
