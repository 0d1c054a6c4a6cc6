-- Lays out a pi/tree result as text lines: one line per entry, indented only where the tree
-- branches (as pi's /tree does), the active path and the leaf marked, labels shown. Label
-- entries are bookkeeping, not conversation, so they are hidden and their children take their place.
-- An entry a context edit (pi 1.6) left out of the model's context, or replaced there, says so.
local context_edit = require("pi.api").context_edit
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

-- The entries shown under `ids`, looking through hidden ones.
local function visible(tree, by_id, ids)
  local result = {}
  for _, id in ipairs(ids or {}) do
    local entry = by_id[id]
    if entry and HIDDEN[entry.type] then
      vim.list_extend(result, visible(tree, by_id, tree.children[id]))
    elseif entry then
      table.insert(result, entry)
    end
  end
  return result
end

-- The last shown entry of the active path carries the leaf mark (the leaf may be a hidden label).
local function shown_leaf(tree, by_id)
  local path = tree.activePath or {}
  for index = #path, 1, -1 do
    local entry = by_id[path[index]]
    if entry and not HIDDEN[entry.type] then
      return entry.id
    end
  end
end

local function mark(id, active, leaf)
  if id == leaf then
    return M.MARKS.leaf
  end
  return active[id] and M.MARKS.active or M.MARKS.other
end

local function line(entry, depth, marks)
  local label = (util.present(entry.label) and entry.label ~= "") and ("  [" .. entry.label .. "]") or ""
  local edited = EDITED[entry.contextEdit] and (" (" .. EDITED[entry.contextEdit] .. ")") or ""
  return ("%s%s %s %s%s: %s%s"):format(("  "):rep(depth), marks, entry.id, what(entry), edited, preview(entry), label)
end

--- Returns the lines, the id of each line's entry (nil for header lines), and the leaf's line.
function M.layout(tree)
  local by_id, active = {}, {}
  for _, entry in ipairs(tree.entries or {}) do
    by_id[entry.id] = entry
  end
  for _, id in ipairs(tree.activePath or {}) do
    active[id] = true
  end
  local leaf = shown_leaf(tree, by_id)
  local name = util.present(tree.name) and tree.name or tree.sessionId
  local lines, ids = { ("session %s   leaf %s"):format(tostring(name), tostring(tree.leafId)), "" }, {}

  local leaf_lnum
  local function walk(entries, depth)
    local branches = #entries > 1
    for _, entry in ipairs(entries) do
      local indent = branches and depth + 1 or depth
      table.insert(lines, line(entry, indent, mark(entry.id, active, leaf)))
      ids[#lines] = entry.id
      leaf_lnum = entry.id == leaf and #lines or leaf_lnum
      walk(visible(tree, by_id, tree.children[entry.id]), indent)
    end
  end

  walk(visible(tree, by_id, tree.roots), 0)
  if #lines == 2 then
    table.insert(lines, "(the session is empty)")
  end
  return lines, ids, leaf_lnum
end

return M
