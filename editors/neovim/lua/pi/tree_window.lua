-- The client side of the windowed session tree (pi/treeWindow, pi/treeChildren): levels — the rows
-- under one row, a contiguous window of them — patched from each tree_changed event, so a session
-- of any size costs what the tree buffer shows. Pure data, no buffers: tree.lua draws it
-- (through tree_lines.lua) and does the requests.
local M = {}

--- Rows fetched at once: a level's first screen and each page loaded while moving.
M.PAGE = 100
-- A session whose window's levels hold at most this many rows in all is shown whole; in a bigger
-- one, the other branches of the few branch points nearest the target.
local SMALL_SESSION = 2 * M.PAGE
local SIBLING_LEVELS, SIBLINGS = 3, 10

local TOP = ""

local function present(value)
  return value ~= nil and value ~= vim.NIL
end

local function level_key(parent_id)
  return present(parent_id) and parent_id or TOP
end
M.level_key = level_key

local function remember(model, row, key)
  model.rows[row.id] = row
  model.level_of[row.id] = key
end

--- Adds a fetched window of a level: joined to the rows already there when the two touch or
--- overlap, else in their place.
function M.merge_level(model, level)
  local key = level_key(level.parentId)
  local known = model.levels[key]
  local merged = { parentId = level.parentId, total = level.total, offset = level.offset, rows = level.rows }
  if known and known.total == level.total then
    local known_end, level_end = known.offset + #known.rows, level.offset + #level.rows
    if level.offset <= known_end and known.offset <= level_end then
      local start = math.min(known.offset, level.offset)
      local slots = {}
      for index, row in ipairs(known.rows) do
        slots[known.offset - start + index] = row
      end
      for index, row in ipairs(level.rows) do
        slots[level.offset - start + index] = row
      end
      merged = { parentId = level.parentId, total = level.total, offset = start, rows = slots }
    end
  end
  if known then
    local kept = {}
    for _, row in ipairs(merged.rows) do
      kept[row.id] = true
    end
    for _, row in ipairs(known.rows) do
      if not kept[row.id] then
        model.rows[row.id], model.level_of[row.id] = nil, nil
      end
    end
  end
  model.levels[key] = merged
  for _, row in ipairs(merged.rows) do
    remember(model, row, key)
  end
end

--- A model from a pi/treeWindow result.
function M.new(window)
  local model = {
    session_id = window.sessionId,
    version = window.version,
    leaf_id = present(window.leafId) and window.leafId or nil,
    name = present(window.name) and window.name or nil,
    levels = {},
    rows = {},
    level_of = {},
  }
  local rows = 0
  for _, level in ipairs(window.levels or {}) do
    rows = rows + level.total
    M.merge_level(model, level)
  end
  model.small = rows <= SMALL_SESSION
  return model
end

--- The level under `parent_id` (nil: the top level), or nil when it is not fetched.
function M.level(model, parent_id)
  return model.levels[level_key(parent_id)]
end

--- How many rows the model holds.
function M.size(model)
  local count = 0
  for _ in pairs(model.rows) do
    count = count + 1
  end
  return count
end

--- The pi/treeChildren params for the page before or after the window of a level.
function M.page_params(model, parent_id, direction)
  local level = M.level(model, parent_id) or { offset = 0, rows = {} }
  local params = { parentId = present(parent_id) and parent_id or vim.NIL, limit = M.PAGE }
  if direction == "before" then
    params.offset = math.max(0, level.offset - M.PAGE)
    params.limit = math.max(1, level.offset - params.offset)
  else
    params.offset = level.offset + #level.rows
  end
  return params
end

--- The parent ids of the levels worth fetching whole. In a small session: every level only partly
--- loaded and, while the model holds fewer than `small_tree` rows, the rows under expandable rows
--- not fetched yet, so it shows every branch, as a whole tree would. In a big one: the other
--- branches of the few branch points nearest the target (`path` lists the window's levels, top
--- first), so the first screen stays small.
function M.levels_to_fill(model, small_tree, path)
  local wanted, seen = {}, {}
  local function want(parent_id)
    local key = level_key(parent_id)
    if not seen[key] then
      seen[key] = true
      table.insert(wanted, present(parent_id) and parent_id or vim.NIL)
    end
  end
  if not model.small then
    for index = #path, 1, -1 do
      local level = model.levels[level_key(path[index])]
      if level and #level.rows < level.total and level.total <= SIBLINGS and #wanted < SIBLING_LEVELS then
        want(level.parentId)
      end
    end
    return wanted
  end
  for _, level in pairs(model.levels) do
    if #level.rows < level.total then
      want(level.parentId)
    end
  end
  if M.size(model) < small_tree then
    for id, row in pairs(model.rows) do
      if row.expandable and not model.levels[id] then
        want(id)
      end
    end
  end
  return wanted
end

local function append(model, row)
  -- A new branch restructures the level of its parent (a run ends there now): refetch.
  if row.branchStart then
    return false
  end
  local parent = present(row.parentId) and model.rows[row.parentId] or nil
  if present(row.parentId) and not parent then
    return false
  end
  local key = TOP
  if parent then
    parent.childCount = (parent.childCount or 0) + 1
    if parent.branchStart and parent.childCount == 1 then
      -- The first entry after a branch's start opens the run under it.
      parent.expandable = true
      key = parent.id
      model.levels[key] = model.levels[key] or { parentId = parent.id, total = 0, offset = 0, rows = {} }
    else
      key = model.level_of[parent.id] or TOP
    end
  else
    model.levels[key] = model.levels[key] or { parentId = nil, total = 0, offset = 0, rows = {} }
  end
  local level = model.levels[key]
  if not level then
    return false
  end
  local reaches_end = level.offset + #level.rows == level.total
  local last = level.rows[#level.rows]
  if parent and reaches_end and key ~= parent.id and (not last or last.id ~= parent.id) then
    return false
  end
  level.total = level.total + 1
  if reaches_end then
    table.insert(level.rows, row)
    remember(model, row, key)
  end
  return true
end

--- Applies a tree_changed event: "stale" when the model has it already, "resync" when it cannot
--- follow (a missed event, a new branch, a leaf moved without new entries, an entry whose parent
--- is not loaded): fetch pi/treeWindow again. Otherwise "patched".
function M.apply_change(model, event)
  if event.version <= model.version then
    return "stale"
  end
  if event.version ~= model.version + 1 then
    return "resync"
  end
  model.version = event.version
  model.name = present(event.name) and event.name or nil
  for id, label in pairs(event.labels or {}) do
    local row = model.rows[id]
    if row then
      row.label = present(label) and label or nil
    end
  end
  -- The contextEdit marks the change's context edits changed (vim.NIL: none applies now).
  for id, effect in pairs(event.contextEdits or {}) do
    local row = model.rows[id]
    if row then
      row.contextEdit = present(effect) and effect or nil
    end
  end
  local outcome = "patched"
  local arrived = false
  for _, row in ipairs(event.entries or {}) do
    arrived = arrived or row.id == event.leafId
    if not model.rows[row.id] and not append(model, row) then
      outcome = "resync"
    end
  end
  local leaf = present(event.leafId) and event.leafId or nil
  local moved = leaf ~= model.leaf_id
  model.leaf_id = leaf
  if moved and not arrived then
    return "resync"
  end
  return outcome
end

return M
