"""Extension files the extension tests install in ``.pi/extensions/`` (e2e, unit, conformance)."""

MEMORY_NOTE = "Team memory: deploys happen on Fridays."
TEAM_RULE = "Team rule: answer in haiku."

TEAM = f'''
import re


def before_agent_start(event):
    return {{"systemPrompt": event.system_prompt + "\\n\\n{TEAM_RULE}"}}


def context(event):
    note = {{"role": "user", "content": [{{"type": "text", "text": "{MEMORY_NOTE}"}}],
            "timestamp": 0}}
    return {{"messages": [*event.messages[:-1], note, event.messages[-1]]}}


def tool_result(event):
    content = [
        {{**block, "text": re.sub(r"sk-\\w+", "[redacted]", block["text"])}}
        if block["type"] == "text" else block
        for block in event.content
    ]
    return {{"content": content}}
'''

BROKEN = """
def before_agent_start(event):
    raise RuntimeError("a broken extension")


def context(event):
    raise RuntimeError("a broken extension")


def tool_result(event):
    raise RuntimeError("a broken extension")
"""

STATEFUL = """
count = 0
restored = None


def session_start(event):
    global count, restored
    count = sum(1 for entry in event.entries
                if entry["type"] == "custom" and entry["customType"] == "counter")
    restored = count


def before_agent_start(event):
    global count
    count += 1
    event.append_entry("counter", {"turn": count})
    if restored:
        return {"systemPrompt": event.system_prompt + f"\\n\\nRestored {restored} turns."}
    return None
"""
