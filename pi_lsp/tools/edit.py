"""``edit``: exact-text replacements in one file, against its current (possibly unsaved) text."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from pi_lsp.tools.base import Tool, ToolContext, ToolError, ToolResult, text_result
from pi_lsp.tools.edit_diff import (
    apply_edits,
    detect_line_ending,
    generate_diff_string,
    generate_unified_patch,
    normalize_to_lf,
    restore_line_endings,
    strip_bom,
)
from pi_lsp.tools.files import file_mutation_lock, load_text, store_text
from pi_lsp.tools.paths import resolve_to_cwd


class EditTool(Tool):
    name = "edit"
    description = (
        "Change one file by exact text replacement. Each edits[].oldText must match one unique "
        "stretch of the file as it is now, and no two edits may overlap; all edits are matched "
        "against the file before any of them is applied. When two changes touch the same or "
        "neighbouring lines, make them one edit. Keep oldText short but unique: do not pad it "
        "with large unchanged regions."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "path": {
                "type": "string",
                "description": "File to edit (relative to the workspace or absolute)",
            },
            "edits": {
                "type": "array",
                "description": (
                    "One or more replacements, each matched against the original file (not "
                    "against the result of earlier edits). Overlapping or nested edits are "
                    "refused; merge nearby changes into one edit."
                ),
                "items": {
                    "type": "object",
                    "properties": {
                        "oldText": {
                            "type": "string",
                            "description": (
                                "The exact text to replace. It must occur once in the file and "
                                "must not overlap another edit's oldText."
                            ),
                        },
                        "newText": {
                            "type": "string",
                            "description": "The text to put in its place",
                        },
                    },
                    "required": ["oldText", "newText"],
                },
            },
        },
        "required": ["path", "edits"],
    }

    def prepare_arguments(self, arguments: Any) -> Any:
        """Accept ``edits`` sent as a JSON string and the
        older single ``oldText``/``newText`` form."""
        if not isinstance(arguments, dict):
            return arguments
        args = dict(arguments)
        if isinstance(args.get("edits"), str):
            try:
                parsed = json.loads(args["edits"])
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                args["edits"] = parsed
        if isinstance(args.get("oldText"), str) and isinstance(args.get("newText"), str):
            edits = list(args["edits"]) if isinstance(args.get("edits"), list) else []
            edits.append({"oldText": args.pop("oldText"), "newText": args.pop("newText")})
            args["edits"] = edits
        return args

    async def run(self, arguments: dict[str, Any], context: ToolContext) -> ToolResult:
        raw_path: str = arguments["path"]
        edits = [(edit["oldText"], edit["newText"]) for edit in arguments["edits"]]
        if not edits:
            raise ToolError("edits must contain at least one replacement.")
        path = resolve_to_cwd(raw_path, context.cwd)
        async with file_mutation_lock(path):
            found = await load_text(path, context)
            if found is None:
                what = "is a directory" if path.is_dir() else "does not exist"
                raise ToolError(f"Could not edit {raw_path}: the file {what}.")
            raw_text, source = found
            bom, text = strip_bom(raw_text)
            ending = detect_line_ending(text)
            base = normalize_to_lf(text)
            new_base = apply_edits(base, edits, raw_path)
            via_editor = await store_text(
                path, bom + restore_line_endings(new_base, ending), context
            )
        diff, first_changed = generate_diff_string(base, new_base)
        patch = generate_unified_patch(raw_path, base, new_base)
        count = len(edits)
        where = " (through the editor)" if via_editor else ""
        return text_result(
            f"Replaced {count} block{'s' if count != 1 else ''} in {raw_path}{where}.",
            {
                "diff": diff,
                "patch": patch,
                "firstChangedLine": first_changed,
                "path": str(path),
                "source": source,
                "viaEditor": via_editor,
            },
        )
