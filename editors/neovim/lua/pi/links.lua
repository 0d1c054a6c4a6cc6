-- Paths in the chat that open a file: a card's file and its search results (recorded as extmarks,
-- so they follow their lines when earlier history is put above), and `path:line` in any text that
-- names a file of the workspace. `open_under_cursor` (the chat's <CR>) opens it at the line, in
-- the window the user came from (or opens the closed fold under the cursor).
local util = require("pi.util")

local M = {}

local NAMESPACE = vim.api.nvim_create_namespace("pi-chat-links")
-- Per buffer: extmark id → {path, line}.
local targets = {}

function M.reset(buffer)
  targets[buffer] = {}
  if vim.api.nvim_buf_is_valid(buffer) then
    vim.api.nvim_buf_clear_namespace(buffer, NAMESPACE, 0, -1)
  end
end

--- Records that line `lnum` of `buffer` opens `path` (at `line`).
function M.add(buffer, lnum, path, line)
  local id = vim.api.nvim_buf_set_extmark(buffer, NAMESPACE, lnum - 1, 0, {})
  targets[buffer] = targets[buffer] or {}
  targets[buffer][id] = { path = path, line = line }
end

--- The links of `buffer` as `{row, path, line}` (to move them into another buffer).
function M.of(buffer)
  local found = {}
  for _, mark in ipairs(vim.api.nvim_buf_get_extmarks(buffer, NAMESPACE, 0, -1, {})) do
    local target = (targets[buffer] or {})[mark[1]]
    if target then
      table.insert(found, { row = mark[2] + 1, path = target.path, line = target.line })
    end
  end
  return found
end

local function recorded_at(buffer, lnum)
  local marks = vim.api.nvim_buf_get_extmarks(buffer, NAMESPACE, { lnum - 1, 0 }, { lnum - 1, -1 }, {})
  for _, mark in ipairs(marks) do
    local target = (targets[buffer] or {})[mark[1]]
    if target then
      return target
    end
  end
end

-- The server's workspace folder: the cards' paths are relative to it.
local function workspace_root()
  local client = require("pi.client").get()
  return client and client.config.root_dir or require("pi.client").root_dir()
end

local function workspace_file(path)
  local full = vim.startswith(path, "/") and path or vim.fs.joinpath(workspace_root(), path)
  return vim.fn.filereadable(full) == 1 and full or nil
end

local function file_word(word)
  local path, line = word:match("^(.-):(%d+)")
  path = (path or word):gsub("[%.,:;]+$", "")
  local full = path ~= "" and workspace_file(path)
  return full and { path = full, line = tonumber(line) } or nil
end

--- The workspace file `text` names (`path` or `path:line`): the word at column `col` (from 1)
--- if it names one, else the first word of the line that does.
function M.path_in_text(text, col)
  local words = {}
  for first, word in text:gmatch("()([%w%._%-/~:]+)") do
    if col >= first and col < first + #word then
      local found = file_word(word)
      if found then
        return found
      end
    end
    table.insert(words, word)
  end
  for _, word in ipairs(words) do
    local found = file_word(word)
    if found then
      return found
    end
  end
end

local function editing_window(chat_window)
  vim.cmd.wincmd("p")
  local window = vim.api.nvim_get_current_win()
  local buffer_type = vim.bo[vim.api.nvim_win_get_buf(window)].filetype
  if window == chat_window or vim.startswith(buffer_type, "pi-") then
    vim.api.nvim_set_current_win(chat_window)
    vim.cmd("aboveleft split")
  end
end

--- Opens `target` ({path, line}) in the window the user came from (a new split if that is one of
--- the plugin's).
function M.open(target)
  local path = target.path
  if not vim.startswith(path, "/") then
    path = vim.fs.joinpath(workspace_root(), path)
  end
  editing_window(vim.api.nvim_get_current_win())
  vim.cmd.edit(vim.fn.fnameescape(path))
  if target.line then
    local last = vim.api.nvim_buf_line_count(0)
    vim.api.nvim_win_set_cursor(0, { math.max(1, math.min(target.line, last)), 0 })
  end
end

--- The chat's <CR>: opens the path under the cursor (on a closed fold, the fold); says so when
--- there is none.
function M.open_under_cursor()
  local buffer = vim.api.nvim_get_current_buf()
  local lnum, col = unpack(vim.api.nvim_win_get_cursor(0))
  if vim.fn.foldclosed(lnum) ~= -1 then
    return vim.cmd("normal! zo")
  end
  local text = vim.api.nvim_get_current_line()
  local target = recorded_at(buffer, lnum) or M.path_in_text(text, col + 1)
  if not target then
    return vim.notify("pi: no file under the cursor", vim.log.levels.INFO)
  end
  if util.present(target.path) then
    M.open(target)
  end
end

return M
