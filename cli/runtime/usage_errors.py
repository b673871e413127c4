"""Usage errors that name the sub-command they belong to, with a "did you mean".

argparse reports words it does not know ("unrecognized arguments") from the top-level
parser, so ``mpiuq campaign run --wokers 2`` would blame ``mpiuq``. Here the error goes
to the deepest sub-command the line selected and suggests its closest option
(:func:`difflib.get_close_matches`). Standard library only: no start-up cost.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Sequence


def selected_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The deepest sub-command parser that ``args`` (parsed by ``parser``) went through."""
    current = parser
    while True:
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            return current
        name = getattr(args, subs[0].dest, None)
        chosen = subs[0].choices.get(name) if isinstance(name, str) else None
        if chosen is None:
            return current
        current = chosen


def unknown_words_message(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """``unknown option --wokers; did you mean --workers?`` for the first unknown option of
    ``extras`` (words ``parser`` did not take), else ``unexpected argument 'x'``."""
    options = [s for a in parser._actions for s in a.option_strings]
    for word in extras:
        if word.startswith("-") and len(word) > 1:
            name = word.split("=", 1)[0]
            close = difflib.get_close_matches(name, options, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else ""
            return f"unknown option {name}{hint}"
    shown = " ".join(extras[:3]) + (" ..." if len(extras) > 3 else "")
    return f"unexpected argument{'s' if len(extras) > 1 else ''} {shown!r}"
