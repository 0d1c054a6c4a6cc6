-- The tree buffer (filetype pi-tree): the session tree from pi/tree, redrawn on tree_changed,
-- with keys to navigate (optionally summarizing the branch left behind, or taking the files the
-- agent changed along), fork and label.
local config = require("pi.config")
local tree_lines = require("pi.tree_lines")
local util = require("pi.util")

local M = {}

local NAME = "pi://tree"

local buffer = nil
-- For each line of the buffer, the entry id it shows; the last pi/tree result; the leaf's line.
local line_ids, current_tree, leaf_line = {}, nil, nil

local function valid()
  return buffer ~= nil and vim.api.nvim_buf_is_valid(buffer)
end

local function actions()
  return require("pi.actions")
end

--- The entry under the cursor of the tree window, or nil with a message.
function M.entry_under_cursor()
  local id = line_ids[vim.api.nvim_win_get_cursor(0)[1]]
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
  for _, entry in ipairs(current_tree and current_tree.entries or {}) do
    if entry.id == id and type(entry.label) == "string" then
      return entry.label
    end
  end
  return ""
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

local function keymaps()
  local keys = config.options.keymaps.tree
  local function map(lhs, rhs, desc)
    if lhs then
      vim.keymap.set("n", lhs, rhs, { buffer = buffer, nowait = true, silent = true, desc = "pi: " .. desc })
    end
  end
  map(keys.navigate, with_entry(function(id) actions().navigate(id, {}) end), "navigate to the entry")
  map(keys.summarize, with_entry(function(id)
    actions().navigate(id, { summarize = true })
  end), "navigate, summarizing the branch left")
  map(keys.summarize_with_instructions, with_entry(ask_instructions), "navigate with a summary and instructions")
  map(keys.restore, with_entry(function(id)
    actions().navigate(id, { files = true })
  end), "go back here with the files (preview, then confirm)")
  map(keys.fork, with_entry(function(id) actions().fork(id) end), "fork a new session at the entry")
  map(keys.label, with_entry(ask_label), "label the entry")
  map(keys.refresh, M.refresh, "refresh the tree")
  map(keys.close, function() vim.cmd.close() end, "close the tree")
end

local function tree_buffer()
  if not valid() then
    line_ids, current_tree, leaf_line = {}, nil, nil
    buffer = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(buffer, NAME)
    vim.bo[buffer].bufhidden = "hide"
    vim.bo[buffer].swapfile = false
    vim.bo[buffer].modifiable = false
    vim.bo[buffer].filetype = "pi-tree"
    keymaps()
  end
  return buffer
end

local function window()
  if not valid() then
    return nil
  end
  return util.window_showing(buffer)
end

-- The cursor goes to the leaf when the leaf moved, not on every redraw: the user may be
-- browsing the tree while a turn runs.
local function follow_leaf(previous, leaf_lnum)
  local shown = window()
  local moved = previous == nil
    or previous.leafId ~= current_tree.leafId
    or previous.sessionId ~= current_tree.sessionId
  if shown and leaf_lnum and moved then
    vim.api.nvim_win_set_cursor(shown, { leaf_lnum, 0 })
  end
end

local function draw(result)
  local target = tree_buffer()
  local previous = current_tree
  current_tree = result
  local lines, ids, leaf_lnum = tree_lines.layout(result)
  line_ids, leaf_line = ids, leaf_lnum
  vim.bo[target].modifiable = true
  vim.api.nvim_buf_set_lines(target, 0, -1, false, lines)
  vim.bo[target].modifiable = false
  follow_leaf(previous, leaf_lnum)
end

--- Fetches the tree again; only while the tree buffer exists (it is not worth a request otherwise).
function M.refresh(callback)
  if not valid() then
    return
  end
  require("pi.api").tree({}, require("pi.api").report_error("pi/tree", function(result)
    draw(result)
    if type(callback) == "function" then
      callback()
    end
  end))
end

--- Shows the tree buffer in a window on the left and fetches the tree.
function M.open()
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
    if leaf_line then
      vim.api.nvim_win_set_cursor(0, { leaf_line, 0 })
    end
  end
  M.refresh()
end

--- The ids of the last tree fetched (for command-line completion), in display order.
function M.entry_ids()
  local lnums = vim.tbl_keys(line_ids)
  table.sort(lnums)
  return vim.tbl_map(function(lnum)
    return line_ids[lnum]
  end, lnums)
end

--- The entry id shown on line `lnum` of the tree buffer (for tests and user mappings).
function M.id_at(lnum)
  return line_ids[lnum]
end

return M
