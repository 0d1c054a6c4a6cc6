"""Text replacement and diffs for the ``edit`` tool (after pi 0.84.2's ``edit-diff.js``).

Every edit is matched against the same original text, never against the result of an earlier
edit. A match is exact first; when some ``oldText`` is not found verbatim, all matching happens in
a normalized view (NFKC, trailing spaces stripped, typographic quotes, dashes and spaces made ASCII)
and only the lines an edit touches are rewritten, so the rest of the file keeps its bytes.
"""

from __future__ import annotations

import difflib
import itertools
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from pi_lsp.tools.base import ToolError


def detect_line_ending(content: str) -> str:
    crlf = content.find("\r\n")
    lf = content.find("\n")
    if lf == -1 or crlf == -1:
        return "\n"
    return "\r\n" if crlf < lf else "\n"


def normalize_to_lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def restore_line_endings(text: str, ending: str) -> str:
    return text.replace("\n", "\r\n") if ending == "\r\n" else text


def strip_bom(content: str) -> tuple[str, str]:
    """(bom, text): the byte-order mark, if any, and the text without it."""
    if content.startswith("\ufeff"):
        return "\ufeff", content[1:]
    return "", content


_SINGLE_QUOTES = re.compile("[\u2018\u2019\u201a\u201b]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d\u201e\u201f]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2015\u2212]")
_SPACES = re.compile("[\u00a0\u2002-\u200a\u202f\u205f\u3000]")


def normalize_for_fuzzy_match(text: str) -> str:
    text = unicodedata.normalize("NFKC", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    return _SPACES.sub(" ", text)


@dataclass
class _Match:
    found: bool
    index: int
    length: int
    fuzzy: bool


def fuzzy_find_text(content: str, old_text: str) -> _Match:
    index = content.find(old_text)
    if index != -1:
        return _Match(True, index, len(old_text), False)
    fuzzy_content = normalize_for_fuzzy_match(content)
    fuzzy_old = normalize_for_fuzzy_match(old_text)
    index = fuzzy_content.find(fuzzy_old)
    if index == -1:
        return _Match(False, -1, 0, False)
    return _Match(True, index, len(fuzzy_old), True)


def _count_occurrences(content: str, old_text: str) -> int:
    needle = normalize_for_fuzzy_match(old_text)
    if not needle:
        return 0
    return normalize_for_fuzzy_match(content).count(needle)


@dataclass
class Replacement:
    edit_index: int
    index: int
    length: int
    new_text: str


def _apply(content: str, replacements: Sequence[Replacement], offset: int = 0) -> str:
    result = content
    for item in sorted(replacements, key=lambda r: r.index, reverse=True):
        start = item.index - offset
        result = result[:start] + item.new_text + result[start + item.length :]
    return result


@dataclass
class _Group:
    start_line: int
    end_line: int
    items: list[Replacement]


_LINE_WITH_ENDING = re.compile(r"[^\n]*\n|[^\n]+")


def _lines_with_endings(content: str) -> list[str]:
    return _LINE_WITH_ENDING.findall(content)


def _apply_preserving_unchanged_lines(
    original: str, base: str, replacements: Sequence[Replacement]
) -> str:
    """Apply replacements matched in ``base`` (a per-line normalized view of ``original``),
    rewriting only the lines they touch and copying every other line from ``original``."""
    original_lines = _lines_with_endings(original)
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in _lines_with_endings(base):
        spans.append((offset, offset + len(line)))
        offset += len(line)
    if len(original_lines) != len(spans):
        raise ToolError(
            "The edit could not be applied: normalizing the file changed its line count."
        )
    groups: list[_Group] = []
    for item in sorted(replacements, key=lambda r: r.index):
        start_line = next((i for i, (s, e) in enumerate(spans) if s <= item.index < e), -1)
        if start_line == -1:
            raise ToolError("The edit could not be applied: a match lies outside the file.")
        end_line = start_line
        while end_line < len(spans) and spans[end_line][1] < item.index + item.length:
            end_line += 1
        if end_line >= len(spans):
            raise ToolError("The edit could not be applied: a match lies outside the file.")
        end_line += 1
        if groups and start_line < groups[-1].end_line:
            groups[-1].end_line = max(groups[-1].end_line, end_line)
            groups[-1].items.append(item)
        else:
            groups.append(_Group(start_line, end_line, [item]))
    out: list[str] = []
    line_index = 0
    for group in groups:
        out.extend(original_lines[line_index : group.start_line])
        group_start = spans[group.start_line][0]
        group_end = spans[group.end_line - 1][1]
        out.append(_apply(base[group_start:group_end], group.items, group_start))
        line_index = group.end_line
    out.extend(original_lines[line_index:])
    return "".join(out)


def apply_edits(content: str, edits: Sequence[tuple[str, str]], path: str) -> str:
    """Apply ``(oldText, newText)`` pairs to LF-normalized ``content``; raises :class:`ToolError`
    when an oldText is empty, missing or not unique, when two edits overlap, or when nothing
    changes."""
    edits = [(normalize_to_lf(old), normalize_to_lf(new)) for old, new in edits]
    many = len(edits) > 1

    def which(index: int) -> str:
        return f"edits[{index}]" if many else "the text to replace"

    for index, (old, _new) in enumerate(edits):
        if not old:
            raise ToolError(
                f"{f'edits[{index}].oldText' if many else 'oldText'} is empty in {path}; "
                "it must quote the text to replace."
            )
    used_fuzzy = any(fuzzy_find_text(content, old).fuzzy for old, _ in edits)
    base = normalize_for_fuzzy_match(content) if used_fuzzy else content
    matched: list[Replacement] = []
    for index, (old, new) in enumerate(edits):
        match = fuzzy_find_text(base, old)
        if not match.found:
            raise ToolError(
                f"Could not find {which(index)} in {path}. oldText must match the current file "
                "exactly, including whitespace and line breaks; read the file again if unsure "
                "what it contains now."
            )
        count = _count_occurrences(base, old)
        if count > 1:
            raise ToolError(
                f"Found {count} occurrences of {which(index)} in {path}; each oldText must occur "
                "exactly once. Include more of the surrounding lines to make it unique."
            )
        matched.append(Replacement(index, match.index, match.length, new))
    matched.sort(key=lambda r: r.index)
    for previous, current in itertools.pairwise(matched):
        if previous.index + previous.length > current.index:
            raise ToolError(
                f"edits[{previous.edit_index}] and edits[{current.edit_index}] overlap in {path}. "
                "Merge them into one edit or target separate regions."
            )
    if used_fuzzy:
        result = _apply_preserving_unchanged_lines(content, base, matched)
    else:
        result = _apply(base, matched)
    if result == content:
        raise ToolError(
            f"No changes made to {path}: the replacement{'s' if many else ''} left the text as it "
            "was."
        )
    return result


# --- diffs ------------------------------------------------------------------------------------


def _diff_parts(old: str, new: str) -> list[tuple[str, list[str]]]:
    """Line diff as a list of ("equal" | "removed" | "added", lines-without-endings)."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    parts: list[tuple[str, list[str]]] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append(("equal", [line.rstrip("\n") for line in old_lines[i1:i2]]))
            continue
        if i2 > i1:
            parts.append(("removed", [line.rstrip("\n") for line in old_lines[i1:i2]]))
        if j2 > j1:
            parts.append(("added", [line.rstrip("\n") for line in new_lines[j1:j2]]))
    return parts


def generate_diff_string(old: str, new: str, context_lines: int = 4) -> tuple[str, int | None]:
    """pi's display diff: ``+12 text`` / ``-12 text`` / `` 12 text`` lines with a few lines of
    context and `` ...`` for skipped stretches. Returns (diff, first changed line in the new
    text)."""
    parts = _diff_parts(old, new)
    width = len(str(max(len(old.split("\n")), len(new.split("\n")))))
    pad = " " * width
    output: list[str] = []
    old_no = new_no = 1
    last_was_change = False
    first_changed: int | None = None

    def context(lines: Sequence[str]) -> None:
        nonlocal old_no, new_no
        for line in lines:
            output.append(f" {str(old_no).rjust(width)} {line}")
            old_no += 1
            new_no += 1

    def skip(count: int) -> None:
        nonlocal old_no, new_no
        output.append(f" {pad} ...")
        old_no += count
        new_no += count

    for index, (kind, lines) in enumerate(parts):
        if kind != "equal":
            if first_changed is None:
                first_changed = new_no
            for line in lines:
                if kind == "added":
                    output.append(f"+{str(new_no).rjust(width)} {line}")
                    new_no += 1
                else:
                    output.append(f"-{str(old_no).rjust(width)} {line}")
                    old_no += 1
            last_was_change = True
            continue
        next_is_change = index + 1 < len(parts) and parts[index + 1][0] != "equal"
        if last_was_change and next_is_change:
            if len(lines) <= context_lines * 2:
                context(lines)
            else:
                context(lines[:context_lines])
                skip(len(lines) - 2 * context_lines)
                context(lines[len(lines) - context_lines :])
        elif last_was_change:
            shown = lines[:context_lines]
            context(shown)
            if len(lines) > len(shown):
                skip(len(lines) - len(shown))
        elif next_is_change:
            skipped = max(0, len(lines) - context_lines)
            if skipped:
                skip(skipped)
            context(lines[skipped:])
        else:
            old_no += len(lines)
            new_no += len(lines)
        last_was_change = False
    return "\n".join(output), first_changed


def generate_unified_patch(path: str, old: str, new: str, context_lines: int = 4) -> str:
    """A standard unified diff (``--- path`` / ``+++ path`` / ``@@`` hunks), marking a last line
    without a line break like ``diff`` does."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    out = [f"--- {path}\n", f"+++ {path}\n"]

    def emit(prefix: str, line: str) -> None:
        out.append(prefix + line)
        if not line.endswith("\n"):
            out.append("\n\\ No newline at end of file\n")

    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(context_lines):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        old_start = i1 + 1 if i2 > i1 else i1
        new_start = j1 + 1 if j2 > j1 else j1
        out.append(f"@@ -{old_start},{i2 - i1} +{new_start},{j2 - j1} @@\n")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                for line in old_lines[a1:a2]:
                    emit(" ", line)
                continue
            for line in old_lines[a1:a2]:
                emit("-", line)
            for line in new_lines[b1:b2]:
                emit("+", line)
    return "".join(out)
