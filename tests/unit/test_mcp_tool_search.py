"""tool_search's parts that need no server: pi's tokenizer and which tools a branch loaded."""

from __future__ import annotations

from pi_lsp.mcp.tool_search import loaded_tool_names, rank, search_document, tokenize


def test_tokenize_splits_identifiers_and_drops_stop_words():
    assert tokenize("getCurrentTime of the HTTPServer") == [
        "get",
        "current",
        "time",
        "http",
        "server",
    ]
    assert tokenize("search_issues for repositories") == ["search", "issue", "repository"]
    assert tokenize("the and of") == []


def test_a_query_of_stop_words_finds_nothing():
    documents = [search_document("mcp__a__echo", "Echo the text", {})]
    assert rank("the of", documents, 8) == []
    assert rank("echo", documents, 0) == []


def test_an_exact_name_ranks_first():
    documents = [
        search_document("mcp__a__read_file", "Read a file, any file, file contents", {}),
        search_document("mcp__b__file", "Something else", {}),
    ]
    assert rank("file", documents, 8)[0] == "mcp__b__file"


def _message(role, **fields):
    return {"type": "message", "message": {"role": role, **fields}}


def test_loads_come_from_tool_search_results_and_pi_system_messages():
    entries = [
        _message("system", toolsAdded=[{"name": "read"}, {"name": "mcp__x__a"}]),
        _message("toolResult", toolName="tool_search", details={"loaded": ["mcp__y__b"]}),
        _message("toolResult", toolName="bash", details={"loaded": ["not_a_load"]}),
        _message("toolResult", toolName="tool_search", details={"loaded": ["mcp__x__a"]}),
        {"type": "custom", "customType": "x", "data": {"loaded": ["nope"]}},
    ]
    assert loaded_tool_names(entries) == ["mcp__x__a", "mcp__y__b"]


def test_a_tool_pi_removed_from_the_loadout_is_no_longer_loaded():
    entries = [
        _message("toolResult", toolName="tool_search", details={"loaded": ["mcp__y__b"]}),
        _message(
            "system", toolsAdded=[{"name": "mcp__x__a"}], toolsRemoved=[{"name": "mcp__y__b"}]
        ),
    ]
    assert loaded_tool_names(entries) == ["mcp__x__a"]
