-- The :PiContext buffer (filetype pi-context): what the next request carries (pi/context), a bar
-- drawn in text and the parts largest first, with keys to open a context file, show a message in
-- the chat, forget, replace or restore it. Refreshed after every change of the session's tree.
local config = require("pi.config")
local context_lines = require("pi.context_lines")
local util = require("pi.util")

local M = {}

local NAME = "pi://context"
local buffer, parts_at = nil, {}

local function valid()
  return buffer ~= nil and vim.api.nvim_buf_is_valid(buffer)
end

local function api()
  return require("pi.api")
end

local function part_under_cursor()
  local part = parts_at[vim.api.nvim_win_get_cursor(0)[1]]
  if not part then
    vim.notify("pi: no part on this line", vim.log.levels.WARN)
  end
  return part
end

local function draw(result)
  if not valid() then
    return
  end
  local lines
  lines, parts_at = context_lines.layout(result)
  vim.bo[buffer].modifiable = true
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, lines)
  vim.bo[buffer].modifiable = false
end

--- Fetches pi/context again and redraws; only while the buffer exists.
function M.refresh(callback)
  if not valid() then
    return
  end
  api().context({}, api().report_error("pi/context", function(result)
    draw(result)
    if type(callback) == "function" then
      callback(result)
    end
  end))
end

-- After an edit: the chat's history (its notes), the statusline's meter, the tree and this view.
local function edited(message)
  return function()
    if message then
      vim.notify("pi: " .. message, vim.log.levels.INFO)
    end
    local chat = require("pi.chat")
    api().messages({ limit = chat.HISTORY_LIMIT }, api().report_error("pi/messages", function(result)
      chat.clear()
      chat.history(result)
    end))
    require("pi.status").refresh()
    M.refresh()
  end
end

M.FORGET_NOTE = "removed from the context; the message stays in the session file (u restores it)"

--- Leaves the message `id` out of future context.
function M.forget(id)
  local params = { targetId = id, replacement = vim.NIL }
  api().context_edit(params, api().report_error("pi/contextEdit", edited(M.FORGET_NOTE)))
end

--- Replaces the content of message `id` in future context with `text`.
function M.replace(id, text)
  api().context_edit({ targetId = id, replacement = text }, api().report_error("pi/contextEdit", edited(nil)))
end

--- Gives message `id` its stored content back in future context.
function M.restore(id)
  api().context_restore({ targetId = id }, api().report_error("pi/contextRestore", edited(nil)))
end

local function with_part(fn, needs_editable)
  return function()
    local part = part_under_cursor()
    if not part then
      return
    end
    if needs_editable and not context_lines.editable(part) then
      return vim.notify("pi: only user, assistant, tool-result and custom messages can be edited", vim.log.levels.WARN)
    end
    fn(part)
  end
end

local function open_part(part)
  if util.present(part.path) then
    vim.cmd.wincmd("p")
    return vim.cmd.edit(vim.fn.fnameescape(part.path))
  end
  if util.present(part.entryId) then
    return require("pi.chat").show_text(util.present(part.preview) and part.preview or "")
  end
  vim.notify("pi: nothing to open for this part", vim.log.levels.INFO)
end

local function ask_replacement(part)
  local default = util.present(part.preview) and part.preview or ""
  vim.ui.input({ prompt = "Replace in context with: ", default = default }, function(text)
    if text and vim.trim(text) ~= "" then
      M.replace(part.entryId, text)
    end
  end)
end

local function keymaps()
  local keys = config.options.keymaps.context
  local function map(lhs, rhs, desc)
    if lhs then
      vim.keymap.set("n", lhs, rhs, { buffer = buffer, nowait = true, silent = true, desc = "pi: " .. desc })
    end
  end
  map(keys.open, with_part(open_part), "open the file, or show the message in the chat")
  map(keys.forget, with_part(function(part) M.forget(part.entryId) end, true), "forget the message")
  map(keys.replace, with_part(ask_replacement, true), "replace the message in the context")
  map(keys.restore, with_part(function(part) M.restore(part.entryId) end, true), "restore the message")
  map(keys.refresh, function() M.refresh() end, "refresh")
  map(keys.close, function() vim.cmd.close() end, "close")
end

local function context_buffer()
  if not valid() then
    buffer = util.scratch_buffer(NAME, "pi-context", false)
    keymaps()
  end
  return buffer
end

--- Shows the context buffer in a window below and fetches the context.
function M.open(callback)
  context_buffer()
  local shown = util.window_showing(buffer)
  if shown then
    vim.api.nvim_set_current_win(shown)
  else
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, buffer)
    vim.wo.wrap, vim.wo.number, vim.wo.cursorline = false, false, true
  end
  M.refresh(callback)
end

--- A tree change of the shown session (events.lua calls it): the context changed with it.
function M.on_tree_changed()
  if valid() and util.window_showing(buffer) then
    M.refresh()
  end
end

--- The part shown on line `lnum` (for tests and user mappings).
function M.part_at(lnum)
  return parts_at[lnum]
end

return M
