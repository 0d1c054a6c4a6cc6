"""An ACP prompt's content blocks as pi's prompt: the text and the images.

Text blocks are joined; embedded resources (the files an ACP client attaches with ``@``) are put
into the text as ``<file>`` blocks, resource links as their URI; images become pi's image parts.
Audio is not offered (``promptCapabilities.audio`` is false) and is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp.schema import (
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from pi_lsp.errors import InvalidParamsError


def prompt_content(blocks: list[Any]) -> tuple[str, list[dict[str, str]], list[Path]]:
    """The prompt's text, its images, and the files it attaches (recorded as the user's reads)."""
    texts: list[str] = []
    images: list[dict[str, str]] = []
    attached: list[Path] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            texts.append(block.text)
        elif isinstance(block, ImageContentBlock):
            images.append({"data": block.data, "mimeType": block.mime_type})
        elif isinstance(block, ResourceContentBlock):
            texts.append(f"@{_path(block.uri)}")
            attached.append(Path(_path(block.uri)))
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                texts.append(f'<file path="{_path(resource.uri)}">\n{resource.text}\n</file>')
            else:
                texts.append(f"@{_path(resource.uri)}")
            attached.append(Path(_path(resource.uri)))
        else:
            kind = getattr(block, "type", type(block).__name__)
            raise InvalidParamsError(f"prompt: {kind} content is not supported")
    return "\n".join(texts), images, [path for path in attached if path.is_absolute()]


def _path(uri: str) -> str:
    """A ``file://`` URI as its path (percent-decoded); any other URI as it is."""
    parsed = urlparse(uri)
    return unquote(parsed.path) if parsed.scheme == "file" else uri
