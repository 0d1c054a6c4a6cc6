"""MCP results as the model sees them (pi 1.6's conversion), and pi's tool names."""

from __future__ import annotations

import base64

from pi_lsp.mcp.naming import mcp_tool_name, server_summary, server_tool_names
from pi_lsp.mcp.output import MCP_OUTPUT_MAX_BYTES, limit_content
from pi_lsp.mcp.results import convert_result


def _saved(store: dict):
    def save(data: bytes, extension: str) -> str:
        path = f"/saved/{len(store)}{extension}"
        store[path] = data
        return path

    return save


def test_text_and_images_pass_through():
    image = {"type": "image", "data": "aGk=", "mimeType": "image/png"}
    result = convert_result("s", "t", {"content": [{"type": "text", "text": "hi"}, image]})
    assert result.content == [{"type": "text", "text": "hi"}, image]
    assert (result.is_error, result.details) == (False, {"server": "s", "tool": "t"})


def test_an_error_without_text_says_which_tool_failed():
    result = convert_result("srv", "tool", {"content": [], "isError": True})
    assert result.is_error
    assert result.text == "MCP tool srv/tool returned an error"


def test_structured_content_alone_becomes_its_json():
    result = convert_result("s", "t", {"content": [], "structuredContent": {"a": 1}})
    assert result.text == '{\n  "a": 1\n}'


def test_unknown_and_audio_blocks_become_placeholders():
    blocks = [{"type": "audio", "data": "", "mimeType": "audio/wav"}, {"type": "hologram"}, 7]
    result = convert_result("s", "t", {"content": blocks})
    assert [block["text"] for block in result.content] == [
        "[audio audio/wav omitted]",
        "[unsupported MCP content hologram]",
        "[unsupported MCP content]",
    ]


def test_resource_links_name_the_read_tool_when_the_server_has_resources():
    link = {"type": "resource_link", "uri": "file:///a.txt", "name": "a", "mimeType": "text/plain"}
    with_resources = convert_result("docs", "t", {"content": [link]}, readable_resources=True)
    assert with_resources.text == (
        '[Resource file:///a.txt "a" (text/plain). Read it with read_mcp_resource (server "docs")]'
    )
    assert convert_result("docs", "t", {"content": [link]}).text == (
        '[Resource file:///a.txt "a" (text/plain)]'
    )


def test_binary_resources_are_saved_and_text_blobs_decoded():
    store: dict[str, bytes] = {}
    blob = base64.b64encode(b"\x00\x01binary").decode()
    text_blob = base64.b64encode(b'{"k": 1}').decode()
    blocks = [
        {
            "type": "resource",
            "resource": {"uri": "x://data.gz", "mimeType": "application/gzip", "blob": blob},
        },
        {
            "type": "resource",
            "resource": {"uri": "x://j", "mimeType": "application/json", "blob": text_blob},
        },
        {"type": "resource", "resource": {"uri": "x://t", "text": "plain text"}},
    ]
    result = convert_result("s", "t", {"content": blocks}, save=_saved(store))
    assert [block["text"] for block in result.content] == [
        "[Binary resource x://data.gz (application/gzip, 8B) saved to /saved/0.gz]",
        '{"k": 1}',
        "plain text",
    ]
    assert store == {"/saved/0.gz": b"\x00\x01binary"}


def test_long_text_keeps_both_ends_and_the_full_text_is_saved():
    store: dict[str, bytes] = {}
    text = "head" + "m" * MCP_OUTPUT_MAX_BYTES + "tail"
    content, path = limit_content([{"type": "text", "text": text}], _saved(store))
    assert path == "/saved/0.txt" and store[path] == text.encode()
    cut = content[0]["text"]
    assert cut.startswith("Warning: truncated output (original token count: 5122)\n")
    assert "head" in cut and cut.endswith(
        "tail\n\n[Full output: /saved/0.txt (read it with offset/limit)]"
    )
    assert f"…{len(text) - MCP_OUTPUT_MAX_BYTES} chars truncated…" in cut


def test_text_within_the_limit_is_untouched():
    content = [{"type": "text", "text": "x" * MCP_OUTPUT_MAX_BYTES}]
    assert limit_content(content, None) == (content, None)


def test_tool_names_follow_pi():
    assert mcp_tool_name("my-server", "get.item") == "mcp__my_server__get_item"
    long = mcp_tool_name("s", "t" * 80)
    assert len(long) == 64 and long[-9] == "_"
    names = server_tool_names("s", ["a-b", "a_b", "c"])
    assert names["c"] == "mcp__s__c"
    assert names["a-b"] != names["a_b"] and all(len(names[k]) == 20 for k in ("a-b", "a_b"))


def test_a_name_owned_by_another_server_gets_the_hash():
    owners: dict[str, str] = {}
    first = server_tool_names("a_b", ["c"], owners)
    second = server_tool_names("a-b", ["c"], owners)
    assert first == {"c": "mcp__a_b__c"}
    assert second["c"].startswith("mcp__a_b__c_") and second["c"] != first["c"]


def test_the_summary_is_the_first_line_of_description_or_instructions():
    assert server_summary(" Docs.\nMore ", "ignored") == "Docs."
    assert server_summary(None, "From the server\nsecond") == "From the server"
    assert server_summary("", None) == ""
