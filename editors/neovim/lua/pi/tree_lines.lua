-- Lays out the windowed tree (tree_window.lua) as text lines: one line per entry, indented only
-- where the tree branches (as pi's /tree does), the active path and the leaf marked, labels shown.
-- What is not fetched shows as a line of its own: "⋯ N earlier entries" before a window, "⋯ N
-- later entries" after it, "▸ …" under a row whose branches are not expanded. Label entries are
-- bookkeeping, not conversation, so they are hidden and their children take their place. An
-- entry a context edit (pi 1.6) left out of the model's context, or replaced there, says so.
local context_edit = require("pi.api").context_edit_effects
local tree_window = require("pi.tree_window")
local util = require("pi.util")

local M = {}

M.MARKS = { leaf = "◉", active = "●", other = "○" }

local HIDDEN = { label = true }
local PREVIEW_LENGTH = 80
local EDITED = {
  [context_edit.removed] = "removed from context",
  [context_edit.replaced] = "replaced in context",
}

local function what(entry)
  if entry.type == "message" then
    return util.present(entry.role) and entry.role or "message"
  end
  return entry.type
end

local function preview(entry)
  local text = util.present(entry.preview) and entry.preview or ""
  text = text:gsub("%s+", " ")
  if vim.fn.strchars(text) > PREVIEW_LENGTH then
    text = vim.fn.strcharpart(text, 0, PREVIEW_LENGTH - 1) .. "…"
  end
  return text
end

-- The leaf mark goes to the leaf, or, when the leaf is a hidden label entry, to the nearest
-- shown entry above it.
local function shown_leaf(model)
  local id = model.leaf_id
  while id and model.rows[id] and HIDDEN[model.rows[id].type] do
    id = util.present(model.rows[id].parentId) and model.rows[id].parentId or nil
  end
  return id
end

local function line(entry, depth, mark)
  local label = (util.present(entry.label) and entry.label ~= "") and ("  [" .. entry.label .. "]") or ""
  local edited = EDITED[entry.contextEdit] and (" (" .. EDITED[entry.contextEdit] .. ")") or ""
  return ("%s%s %s %s%s: %s%s"):format(("  "):rep(depth), mark, entry.id, what(entry), edited, preview(entry), label)
end

local function count(number, one, many)
  local text = tostring(number):reverse():gsub("(%d%d%d)", "%1,"):reverse():gsub("^,", "")
  return ("%s %s"):format(text, number == 1 and one or many)
end

local function more_text(level, direction)
  local branches = level.rows[1] and level.rows[1].branchStart
  local number = direction == "before" and level.offset or (level.total - level.offset - #level.rows)
  if branches then
    return "⋯ " .. count(number, "other branch", "other branches")
  end
  return "⋯ " .. count(number, direction == "before" and "earlier entry" or "later entry",
    direction == "before" and "earlier entries" or "later entries")
end

local function collapsed_text(row)
  if (row.childCount or 0) > 1 then
    return "▸ " .. count(row.childCount, "branch", "branches")
  end
  return "▸ the rest of this branch"
end

--- Returns the lines, what each line stands for (`{id = …}` for an entry, `{more = true, parent =
--- parent_id, direction = "before"|"after"}` for rows not fetched, `{expand = id}` for a collapsed row's
--- children; nil for the header), and the leaf's line. `collapsed` holds the ids the user folded.
function M.layout(model, collapsed)
  collapsed = collapsed or {}
  local leaf = shown_leaf(model)
  local name = util.present(model.name) and model.name or model.session_id
  local lines, actions = { ("session %s   leaf %s"):format(tostring(name), tostring(model.leaf_id)), "" }, {}
  local leaf_lnum

  local function add(text, action)
    table.insert(lines, text)
    actions[#lines] = action
  end

  local function walk(parent_id, depth)
    local level = tree_window.level(model, parent_id)
    if not level then
      return
    end
    local branches = level.rows[1] and level.rows[1].branchStart
    local indent = branches and depth + 1 or depth
    if level.offset > 0 then
      add(("  "):rep(indent) .. more_text(level, "before"), { more = true, parent = parent_id, direction = "before" })
    end
    for _, row in ipairs(level.rows) do
      if HIDDEN[row.type] then
        walk(row.id, indent)
      else
        local mark = row.id == leaf and M.MARKS.leaf or (row.active and M.MARKS.active or M.MARKS.other)
        add(line(row, indent, mark), { id = row.id })
        leaf_lnum = row.id == leaf and #lines or leaf_lnum
        if row.expandable then
          if tree_window.level(model, row.id) and not collapsed[row.id] then
            walk(row.id, indent)
          else
            add(("  "):rep(indent + 1) .. collapsed_text(row), { expand = row.id })
          end
        end
      end
    end
    if level.offset + #level.rows < level.total then
      add(("  "):rep(indent) .. more_text(level, "after"), { more = true, parent = parent_id, direction = "after" })
    end
  end

  walk(nil, 0)
  if #lines == 2 then
    table.insert(lines, "(the session is empty)")
  end
  return lines, actions, leaf_lnum
end

return M
