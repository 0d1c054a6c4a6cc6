"""Team memory: the notes in ``.pi/memory/*.md`` that matter for what the user just asked.

Copy this file to ``.pi/extensions/`` (or ``~/.pi/agent/extensions/``). Before every model
request its ``context`` hook scores each note by how many keywords of the last user message it
has (a keyword in the note's title counts three times), takes the best ``MAX_NOTES`` notes that
score at all, and puts them, within ``MAX_CHARS`` characters, in one message just before that
user message. Nothing it adds is written to the session: the notes are chosen afresh for every
request, so an edited note is used at once (a note is parsed again only when it changes).

The notes folder is ``.pi/memory`` beside the ``.pi/extensions`` folder this file is in, or
``$PI_TEAM_MEMORY_DIR``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

MAX_NOTES = 3
MAX_CHARS = 4000
TITLE_WEIGHT = 3
MIN_WORD_LENGTH = 3
HEADING = "Notes from the team's memory that may help:\n\n"
SEPARATOR = "\n\n---\n\n"
TRUNCATED = "\n[…truncated]"
# fmt: off
STOP_WORDS = frozenset({
    "the", "and", "for", "are", "but", "not", "you", "all", "any", "can", "had", "her", "was",
    "one", "our", "out", "has", "him", "his", "how", "its", "may", "new", "now", "see", "two",
    "who", "did", "get", "let", "put", "say", "she", "too", "use", "this", "that", "with", "have",
    "from", "they", "will", "what", "when", "where", "which", "your", "into", "then", "them",
    "than", "there", "these", "those", "been", "were", "would", "could", "should", "about",
    "please", "make", "just", "like",
})
# fmt: on


def memory_folder() -> Path:
    configured = os.environ.get("PI_TEAM_MEMORY_DIR")
    if configured:
        return Path(configured)
    return Path(__file__).resolve().parent.parent / "memory"


def keywords(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9_]+", text.lower())
    return {word for word in words if len(word) >= MIN_WORD_LENGTH and word not in STOP_WORDS}


@dataclass(frozen=True)
class Note:
    title: str
    text: str
    title_words: frozenset[str]
    words: frozenset[str]


_parsed: dict[Path, tuple[tuple[int, int], Note]] = {}
"""Notes already read, by path, with the modification time and size they were read at."""


def read_notes(folder: Path) -> list[Note]:
    """Every note, in file-name order; only new or changed files are read and parsed again."""
    notes = []
    for path in sorted(folder.glob("*.md")):
        try:
            status = path.stat()
            stamp = (status.st_mtime_ns, status.st_size)
            cached = _parsed.get(path)
            if cached is None or cached[0] != stamp:
                cached = (stamp, parse_note(path, path.read_text(encoding="utf-8")))
                _parsed[path] = cached
        except (OSError, UnicodeDecodeError):
            continue
        notes.append(cached[1])
    return notes


def parse_note(path: Path, text: str) -> Note:
    """The title is the first heading, else the file name."""
    text = text.strip()
    heading = re.match(r"#+\s*(.+)", text)
    title = heading.group(1).strip() if heading else path.stem
    return Note(title, text, frozenset(keywords(title)), frozenset(keywords(text)))


def score(wanted: set[str], note: Note) -> int:
    """How many of the question's keywords the note has (a title word counts three times)."""
    return TITLE_WEIGHT * len(wanted & note.title_words) + len(wanted & note.words)


def relevant_notes(question: str, notes: list[Note]) -> list[Note]:
    wanted = keywords(question)
    scored = [(score(wanted, note), index) for index, note in enumerate(notes)]
    best = sorted((item for item in scored if item[0] > 0), key=lambda item: (-item[0], item[1]))
    return [notes[index] for _, index in best[:MAX_NOTES]]


def memory_text(notes: list[Note]) -> str:
    """The notes under one heading, cut to ``MAX_CHARS`` in all (a cut note says so)."""
    text = HEADING
    for note in notes:
        section = (SEPARATOR if text != HEADING else "") + note.text
        room = MAX_CHARS - len(text)
        if len(section) > room:
            if room > len(SEPARATOR) + len(TRUNCATED) + 40:
                text += section[: room - len(TRUNCATED)].rstrip() + TRUNCATED
            break
        text += section
    return text


def message_text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(
        block.get("text", "")
        for block in content or []
        if isinstance(block, dict) and block.get("type") == "text"
    )


def context(event):
    messages = event.messages
    last_user = next(
        (index for index in range(len(messages) - 1, -1, -1) if messages[index]["role"] == "user"),
        None,
    )
    if last_user is None:
        return None
    notes = relevant_notes(message_text(messages[last_user]), read_notes(memory_folder()))
    if not notes:
        return None
    memory = {
        "role": "user",
        "content": [{"type": "text", "text": memory_text(notes)}],
        "timestamp": messages[last_user].get("timestamp", 0),
    }
    return {"messages": [*messages[:last_user], memory, *messages[last_user:]]}
