-- The tree buffer (filetype pi-tree): a window of the session tree around the leaf (pi/treeWindow),
-- more of it fetched as the cursor reaches a "⋯" line or a branch is expanded (pi/treeChildren),
-- tree_changed events patched in (a missed one fetches the window again), `/` to search the whole
-- session (pi/treeSearch), and keys to navigate (optionally summarizing the branch left behind, or
-- taking the files the agent changed along), fork and label.
local config = require("pi.config")
local tree_lines = require("pi.tree_lines")
local tree_window = require("pi.tree_window")
local util = require("pi.util")

local M = {}

local NAME = "pi://tree"
-- While the tree holds fewer rows than this, unexpanded branches are fetched at once: a small
-- session shows whole, as it always did.
local SMALL_TREE = 200
local FILL_ROUNDS = 4

local buffer = nil
-- What each line of the buffer shows (tree_lines.layout), the model, the ids the user folded.
local line_actions, model, collapsed = {}, nil, {}
-- tree_changed events that arrive while a window is fetched (nil when none is); pages being fetched.
local pending, loading = nil, {}
--- How many times the window was fetched again because events could not be followed.
M.resyncs = 0

local function valid()
  return buffer ~= nil and vim.api.nvim_buf_is_valid(buffer)
end

local function actions()
  return require("pi.actions")
end

local function api()
  return require("pi.api")
end

--- The entry under the cursor of the tree window, or nil with a message.
function M.entry_under_cursor()
  local action = line_actions[vim.api.nvim_win_get_cursor(0)[1]]
  local id = action and action.id
  if not id then
    vim.notify("pi: no entry on this line", vim.log.levels.WARN)
  end
  return id
end

local function with_entry(fn)
  return function()
    local id = M.entry_under_cursor()
    if id then
      fn(id)
    end
  end
end

local function label_of(id)
  local row = model and model.rows[id]
  return row and type(row.label) == "string" and row.label or ""
end

local function ask_instructions(id)
  vim.ui.input({ prompt = "Summary instructions: " }, function(instructions)
    if instructions then
      actions().navigate(id, { summarize = true, instructions = instructions })
    end
  end)
end

local function ask_label(id)
  vim.ui.input({ prompt = "Label (empty clears): ", default = label_of(id) }, function(label)
    if label then
      actions().label(id, label)
    end
  end)
end

local function window()
  if not valid() then
    return nil
  end
  return util.window_showing(buffer)
end

local function lnum_of(id)
  for lnum, action in pairs(line_actions) do
    if action.id == id then
      return lnum
    end
  end
end

--- Draws the model; `cursor` puts the cursor on that entry (true: on the leaf's line), else it
--- stays on its line.
local function draw(cursor)
  if not valid() or not model then
    return
  end
  local lines, shown, leaf_lnum = tree_lines.layout(model, collapsed)
  line_actions = shown
  vim.bo[buffer].modifiable = true
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, lines)
  vim.bo[buffer].modifiable = false
  local target = cursor == true and leaf_lnum or (type(cursor) == "string" and lnum_of(cursor))
  local shown_in = window()
  if shown_in and target then
    vim.api.nvim_win_set_cursor(shown_in, { target, 0 })
  end
end

-- Fetches the levels worth having whole (tree_window.levels_to_fill), a few rounds at most.
local function fill(filling, path, round, done)
  local wanted = round <= FILL_ROUNDS and tree_window.levels_to_fill(filling, SMALL_TREE, path) or {}
  if #wanted == 0 then
    return done()
  end
  local waiting = #wanted
  for _, parent_id in ipairs(wanted) do
    api().tree_children({ parentId = parent_id, offset = 0, limit = tree_window.PAGE }, function(err, result)
      if not err and result and result.version == filling.version then
        tree_window.merge_level(filling, result.level)
      end
      waiting = waiting - 1
      if waiting == 0 then
        fill(filling, path, round + 1, done)
      end
    end)
  end
end

-- Each fetch gets a ticket: only the latest one's window is shown.
local tickets = 0

local function fetch_window(target_id, callback)
  pending = pending or {}
  tickets = tickets + 1
  local ticket = tickets
  local params = { limit = tree_window.PAGE, targetId = target_id }
  api().tree_window(params, function(err, result)
    if ticket ~= tickets then
      return
    end
    if err or not result then
      pending = nil
      return api().report_error("pi/treeWindow", function() end)(err, result)
    end
    local fetched = tree_window.new(result)
    local path = {}
    for index, level in ipairs(result.levels or {}) do
      path[index] = level.parentId == nil and vim.NIL or level.parentId
    end
    fill(fetched, path, 1, function()
      if ticket ~= tickets then
        return
      end
      local queued = pending or {}
      pending = nil
      local previous = model
      model, collapsed = fetched, {}
      for _, event in ipairs(queued) do
        if tree_window.apply_change(model, event) == "resync" then
          return M.resync()
        end
      end
      local leaf_moved = previous == nil or previous.leaf_id ~= model.leaf_id or previous.session_id ~= model.session_id
      -- The cursor goes to the leaf when the leaf moved, not on every redraw: the user may be
      -- browsing the tree while a turn runs.
      draw(target_id or leaf_moved or nil)
      if type(callback) == "function" then
        callback()
      end
    end)
  end)
end

--- Fetches the window again (after a missed event); counted in M.resyncs.
function M.resync()
  M.resyncs = M.resyncs + 1
  fetch_window(nil)
end

--- Fetches the window around the leaf; only while the tree buffer exists.
function M.refresh(callback)
  if not valid() then
    return
  end
  fetch_window(nil, callback)
end

--- Applies a tree_changed event to the shown tree (events.lua calls it).
function M.on_tree_changed(event, session_id)
  if not valid() then
    return
  end
  if pending then
    table.insert(pending, event)
    return
  end
  if not model or (session_id and session_id ~= model.session_id) then
    return M.refresh()
  end
  local leaf_before = model.leaf_id
  local outcome = tree_window.apply_change(model, event)
  if outcome == "resync" then
    M.resync()
  elseif outcome == "patched" then
    draw(model.leaf_id ~= leaf_before or nil)
  end
end

-- Fetches rows of a level (pi/treeChildren `params`) into the model, then calls `on_merged`; a
-- model replaced meanwhile drops them, and a newer version of the tree fetches the window again.
local function fetch_level(params, on_merged, on_done)
  local asked = model
  api().tree_children(params, function(err, result)
    if on_done then
      on_done()
    end
    if err then
      return api().report_error("pi/treeChildren", function() end)(err, result)
    end
    if not result or asked ~= model then
      return
    end
    if result.version ~= model.version then
      return M.resync()
    end
    tree_window.merge_level(model, result.level)
    on_merged()
  end)
end

-- Fetches the page a "⋯" line stands for, keeping the cursor beside the rows it was next to.
local function load_more(lnum, action)
  local key = tree_window.level_key(action.parent) .. action.direction
  if loading[key] or not model then
    return
  end
  local neighbour = line_actions[action.direction == "before" and lnum + 1 or lnum - 1]
  loading[key] = true
  fetch_level(tree_window.page_params(model, action.parent, action.direction), function()
    draw()
    local anchor = neighbour and neighbour.id and lnum_of(neighbour.id)
    local shown = window()
    if anchor and shown then
      local next_line = action.direction == "before" and anchor - 1 or anchor + 1
      vim.api.nvim_win_set_cursor(shown, { math.max(1, math.min(next_line, vim.api.nvim_buf_line_count(buffer))), 0 })
    end
  end, function()
    loading[key] = nil
  end)
end

-- Shows or hides the rows under a row; fetches them the first time.
local function toggle(id)
  if not model or not model.rows[id] or not model.rows[id].expandable then
    return
  end
  if tree_window.level(model, id) then
    collapsed[id] = not collapsed[id] or nil
    return draw(id)
  end
  fetch_level({ parentId = id, offset = 0, limit = tree_window.PAGE }, function()
    collapsed[id] = nil
    draw(id)
  end)
end

--- Expands (or folds) the row under the cursor, or loads the rows a "⋯" line stands for.
function M.expand()
  local lnum = vim.api.nvim_win_get_cursor(0)[1]
  local action = line_actions[lnum]
  if not action then
    return
  end
  if action.more then
    load_more(lnum, action)
  else
    toggle(action.expand or action.id)
  end
end


local function search_label(row)
  local label = util.present(row.label) and ("[" .. row.label .. "] ") or ""
  local text = (util.present(row.preview) and row.preview or row.type):gsub("%s+", " ")
  return ("%s %s %s%s"):format(row.active and tree_lines.MARKS.active or tree_lines.MARKS.other, row.id, label, text)
end

--- Searches the whole session (entry text, labels, names) and jumps to the chosen entry.
function M.search(query)
  local function run(text)
    if not text or vim.trim(text) == "" then
      return
    end
    api().tree_search({ query = text }, api().report_error("pi/treeSearch", function(result)
      if #result.rows == 0 then
        return vim.notify(("pi: nothing in the tree matches %q"):format(text), vim.log.levels.INFO)
      end
      local prompt = ("%d match%s for %q"):format(result.total, result.total == 1 and "" or "es", text)
      vim.ui.select(result.rows, { prompt = prompt, format_item = search_label }, function(row)
        if row then
          M.open(row.id)
        end
      end)
    end))
  end
  if query and query ~= "" then
    return run(query)
  end
  vim.ui.input({ prompt = "Search the tree: " }, run)
end

local function keymaps()
  local keys = config.options.keymaps.tree
  local function map(lhs, rhs, desc)
    if lhs then
      vim.keymap.set("n", lhs, rhs, { buffer = buffer, nowait = true, silent = true, desc = "pi: " .. desc })
    end
  end
  map(keys.navigate, function()
    local action = line_actions[vim.api.nvim_win_get_cursor(0)[1]]
    if action and not action.id then
      return M.expand()
    end
    local id = M.entry_under_cursor()
    if id then
      actions().navigate(id, {})
    end
  end, "navigate to the entry (on a ⋯ or ▸ line: load it)")
  map(keys.summarize, with_entry(function(id)
    actions().navigate(id, { summarize = true })
  end), "navigate, summarizing the branch left")
  map(keys.summarize_with_instructions, with_entry(ask_instructions), "navigate with a summary and instructions")
  map(keys.restore, with_entry(function(id)
    actions().navigate(id, { files = true })
  end), "go back here with the files (preview, then confirm)")
  map(keys.fork, with_entry(function(id) actions().fork(id) end), "fork a new session at the entry")
  map(keys.label, with_entry(ask_label), "label the entry")
  map(keys.expand, M.expand, "expand or fold the branch; load the rows of a ⋯ line")
  map(keys.search, function() M.search() end, "search the whole session tree")
  map(keys.refresh, M.refresh, "refresh the tree")
  map(keys.close, function() vim.cmd.close() end, "close the tree")
end

-- Moving onto a "⋯" line loads what it stands for: the tree grows as the user moves through it.
local function load_on_move()
  local shown = window()
  if not shown or vim.api.nvim_get_current_win() ~= shown then
    return
  end
  local lnum = vim.api.nvim_win_get_cursor(shown)[1]
  local action = line_actions[lnum]
  if action and action.more then
    load_more(lnum, action)
  end
end

local function tree_buffer()
  if not valid() then
    buffer = util.scratch_buffer(NAME, "pi-tree", false)
    keymaps()
    vim.api.nvim_create_autocmd("CursorMoved", { buffer = buffer, callback = load_on_move })
  end
  return buffer
end

--- Shows the tree buffer in a window on the left and fetches the tree around the leaf, or around
--- `target_id` with the cursor on it (a search result).
function M.open(target_id)
  tree_buffer()
  local shown = window()
  if shown then
    vim.api.nvim_set_current_win(shown)
  else
    vim.cmd("topleft vsplit")
    vim.api.nvim_win_set_buf(0, buffer)
    vim.api.nvim_win_set_width(0, util.window_size(vim.o.columns, config.options.window.tree_size))
    vim.wo.wrap, vim.wo.number, vim.wo.cursorline = false, false, true
    -- A new window starts at the leaf of the rows it shows at once; the fetch moves the cursor
    -- only if the leaf moved since, not from under a user already moving through the rows.
    draw(true)
  end
  fetch_window(target_id)
end

--- The ids of the entries shown (for command-line completion), in display order.
function M.entry_ids()
  local lnums = vim.tbl_keys(line_actions)
  table.sort(lnums)
  local ids = {}
  for _, lnum in ipairs(lnums) do
    if line_actions[lnum].id then
      table.insert(ids, line_actions[lnum].id)
    end
  end
  return ids
end

--- The entry id shown on line `lnum` of the tree buffer (for tests and user mappings).
function M.id_at(lnum)
  return line_actions[lnum] and line_actions[lnum].id
end

--- How many rows the tree holds (for tests: it stays bounded however big the session is).
function M.loaded_rows()
  return model and tree_window.size(model) or 0
end

return M
