"""The SimGrid time-independent (TI) reader: :mod:`.reader` (``read_ti``) loads the files
(:mod:`.files`) and runs the compiled parser: lexing (:mod:`.lex`), argument reading
(:mod:`.args`), action decoding (:mod:`.kernel`), the parser state (:mod:`.state`) and its
line loop (:mod:`.parse`), on two threads for large traces (:mod:`.split`); the errors it
reports are worded by :mod:`.messages`.

Nothing is imported with the package: the compiled parser is loaded only to read.
"""
