"""messages.js: wrapper texts, message constructors and convertToLlm."""

from __future__ import annotations

from pi_lsp.session.js_json import dumps
from pi_lsp.session.messages import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    COMPACTION_SUMMARY_PREFIX,
    COMPACTION_SUMMARY_SUFFIX,
    bash_execution_to_text,
    convert_to_llm,
    create_branch_summary_message,
    create_compaction_summary_message,
    create_custom_message,
    date_get_time,
)
from tests.builders import bash_execution, tool_result, user_message

ISO = "2025-01-01T00:00:01.500Z"
MS = 1_735_689_601_500


def test_wrapper_texts_are_pis():
    assert COMPACTION_SUMMARY_PREFIX == (
        "The conversation history before this point was compacted into the following summary:"
        "\n\n<summary>\n"
    )
    assert COMPACTION_SUMMARY_SUFFIX == "\n</summary>"
    assert BRANCH_SUMMARY_PREFIX == (
        "The following is a summary of a branch that this conversation came back from:"
        "\n\n<summary>\n"
    )
    assert BRANCH_SUMMARY_SUFFIX == "</summary>"


def test_constructors_convert_iso_timestamp_and_keep_key_order():
    assert dumps(create_compaction_summary_message("s", 42, ISO)) == (
        '{"role":"compactionSummary","summary":"s","tokensBefore":42,"timestamp":1735689601500}'
    )
    assert dumps(create_branch_summary_message("s", "abc", ISO)) == (
        '{"role":"branchSummary","summary":"s","fromId":"abc","timestamp":1735689601500}'
    )
    assert dumps(create_custom_message("t", "c", False, {"a": 1}, ISO)) == (
        '{"role":"custom","customType":"t","content":"c","display":false,"details":{"a":1},"timestamp":1735689601500}'
    )


def test_date_get_time_follows_javascript_date():
    assert date_get_time(ISO) == MS
    assert date_get_time("not a date") is None
    assert date_get_time(None) == 0  # new Date(null) is the epoch
    assert date_get_time(1234.9) == 1234
    assert date_get_time(9e15) is None  # beyond JavaScript's date range


def test_bash_execution_text_variants():
    assert bash_execution_to_text(bash_execution("ls", "a\nb")) == "Ran `ls`\n```\na\nb\n```"
    assert bash_execution_to_text(bash_execution("true", "")) == "Ran `true`\n(no output)"
    assert (
        bash_execution_to_text(bash_execution("x", "o", exit_code=2))
        == "Ran `x`\n```\no\n```\n\nCommand exited with code 2"
    )
    assert (
        bash_execution_to_text(bash_execution("x", "o", exit_code=None)) == "Ran `x`\n```\no\n```"
    )
    cancelled = bash_execution("x", "", exit_code=1, cancelled=True)
    assert bash_execution_to_text(cancelled) == "Ran `x`\n(no output)\n\n(command cancelled)"
    truncated = bash_execution("x", "o", truncated=True, fullOutputPath="/tmp/out.txt")
    assert bash_execution_to_text(truncated).endswith(
        "\n\n[Output truncated. Full output: /tmp/out.txt]"
    )
    assert "Output truncated" not in bash_execution_to_text(
        bash_execution("x", "o", truncated=True)
    )


def test_convert_to_llm_wraps_pi_roles_as_user_messages():
    messages = [
        user_message("hi", 1),
        bash_execution("ls", "out", timestamp=2),
        bash_execution("secret", "", excludeFromContext=True),
        {"role": "custom", "customType": "t", "content": "note", "display": True, "timestamp": 3},
        {
            "role": "custom",
            "customType": "t",
            "content": [{"type": "image", "data": "x", "mimeType": "image/png"}],
            "timestamp": 4,
        },
        {"role": "branchSummary", "summary": "B", "fromId": "f", "timestamp": 5},
        {"role": "compactionSummary", "summary": "C", "tokensBefore": 9, "timestamp": 6},
        tool_result("r"),
        {"role": "system", "content": "ignored by 0.84.2"},
    ]
    converted = convert_to_llm(messages)
    assert converted[0] is messages[0]
    assert converted[1] == {
        "role": "user",
        "content": [{"type": "text", "text": "Ran `ls`\n```\nout\n```"}],
        "timestamp": 2,
    }
    assert converted[2] == {
        "role": "user",
        "content": [{"type": "text", "text": "note"}],
        "timestamp": 3,
    }
    assert converted[3]["content"] == messages[4]["content"]
    assert converted[4]["content"][0]["text"] == BRANCH_SUMMARY_PREFIX + "B</summary>"
    assert converted[5]["content"][0]["text"] == COMPACTION_SUMMARY_PREFIX + "C\n</summary>"
    assert converted[6] is messages[7]
    assert len(converted) == 7


def test_convert_to_llm_leaves_missing_timestamp_out():
    converted = convert_to_llm([{"role": "branchSummary", "summary": "B"}])
    assert list(converted[0]) == ["role", "content"]
