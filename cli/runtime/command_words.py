"""The command (and action) words of a command line, read before it is parsed.

Imports nothing: the console script reads them while its Ctrl-C handler is the only
thing in place (:mod:`mpiuq.console`), and the parser's module names the running
command from them (:mod:`mpiuq.main`).
"""

from __future__ import annotations

#: Commands whose second word is an action (``campaign run``, ``trace info``, ...).
WITH_ACTIONS = frozenset({"campaign", "trace", "surrogate"})


def early_command_words(argv: list[str]) -> str:
    """The command (and action) words of ``argv``: ``campaign run`` for
    ``campaign run X.toml``, ``replay`` for ``replay TRACE``, ``""`` for none."""
    words = [w for w in argv if not w.startswith("-")]
    if not words:
        return ""
    if words[0] in WITH_ACTIONS and len(words) > 1:
        return f"{words[0]} {words[1]}"
    return words[0]
