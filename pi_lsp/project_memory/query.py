"""A user's search text as an FTS5 query that cannot fail to parse.

The syntax is small: words, ``"a quoted phrase"`` and ``-word`` (leave out what holds it). Every
term goes to FTS5 as a quoted string, so punctuation, FTS5 operators (``AND``, ``NEAR``, ``*``,
``:``) and unbalanced quotes are searched literally instead of raising a syntax error. A term
with no letter or digit in it cannot match a token and is dropped. Words match whole words: a
prefix query would merge the lists of every word it begins, which at a million entries costs
hundreds of milliseconds for a common beginning. A query of nothing but ``-word``s looks for
those words.
"""

from __future__ import annotations

import re

import attrs

_TERMS = re.compile(r'(-?)"([^"]*)"?|(\S+)')


@attrs.frozen
class ParsedQuery:
    required: tuple[str, ...]
    excluded: tuple[str, ...]

    def match_expression(self) -> str | None:
        """The FTS5 ``MATCH`` text, ``None`` when nothing in the query can match."""
        if not self.required:
            return None
        quoted = [_quoted(term) for term in self.required]
        expression = " AND ".join(quoted)
        for term in self.excluded:
            expression = f"({expression}) NOT {_quoted(term)}"
        return expression


def parse_query(text: str) -> ParsedQuery:
    required: list[str] = []
    excluded: list[str] = []
    for match in _TERMS.finditer(_searchable(text)):
        negated, phrase, word = match.group(1), match.group(2), match.group(3)
        if word is not None:
            negated = "-" if word.startswith("-") and len(word) > 1 else ""
            term = word[1:] if negated else word
        else:
            term = phrase
        if not _can_match(term):
            continue
        (excluded if negated else required).append(term)
    if not required:  # only ``-word``s: nothing to look for but the text itself
        required, excluded = excluded, []
    return ParsedQuery(tuple(required), tuple(excluded))


def _searchable(text: str) -> str:
    """``text`` as SQLite can take it: a NUL ends FTS5's reading of the query (an unterminated
    string, should it fall in a quoted term), and a lone surrogate (JSON's ``"\\ud800"``) has no
    UTF-8 form; the first becomes a space, the second is left out."""
    return text.replace("\0", " ").encode("utf-8", "ignore").decode("utf-8")


def _quoted(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _can_match(term: str) -> bool:
    return any(character.isalnum() for character in term)
