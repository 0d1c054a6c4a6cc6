-- The chat buffer as an append-only transcript: lines are added at the end or the last line is
-- extended, and a line may be replaced in place (the line count never changes in the middle), so
-- fold ranges recorded by line number stay valid; the chat window's foldexpr reads them.
local M = {}

-- Per buffer: the fold ranges `{start, stop}` (stop nil while the fold is still growing).
local folds = {}

function M.reset(buffer)
  folds[buffer] = {}
end

local function add_fold(buffer, fold)
  folds[buffer] = folds[buffer] or {}
  table.insert(folds[buffer], fold)
  return fold
end

local function line_count(buffer)
  return vim.api.nvim_buf_line_count(buffer)
end

local function is_empty(buffer)
  return line_count(buffer) == 1 and vim.api.nvim_buf_get_lines(buffer, 0, 1, false)[1] == ""
end

local function write(buffer, first, last, lines)
  vim.bo[buffer].modifiable = true
  vim.api.nvim_buf_set_lines(buffer, first, last, false, lines)
  vim.bo[buffer].modifiable = false
end

-- Keeps the end of the chat in view, except in a chat window where the user reads further up.
local function follow(buffer)
  local last = line_count(buffer)
  for _, window in ipairs(vim.fn.win_findbuf(buffer)) do
    local reading = window == vim.api.nvim_get_current_win() and vim.api.nvim_win_get_cursor(window)[1] < last - 3
    if not reading then
      vim.api.nvim_win_set_cursor(window, { last, 0 })
    end
  end
end

function M.is_empty(buffer)
  return is_empty(buffer)
end

function M.last_line(buffer)
  return vim.api.nvim_buf_get_lines(buffer, -2, -1, false)[1]
end

--- The line number the next appended line will get.
function M.next_line(buffer)
  return is_empty(buffer) and 1 or line_count(buffer) + 1
end

--- Appends whole lines; returns the line number of the first one.
function M.append(buffer, lines)
  local first = M.next_line(buffer)
  write(buffer, is_empty(buffer) and 0 or -1, -1, lines)
  follow(buffer)
  return first
end

--- Extends the last line with `pieces[1]` and adds the other pieces as lines, each after `prefix`.
function M.extend(buffer, pieces, prefix)
  local lines = { M.last_line(buffer) .. pieces[1] }
  for index = 2, #pieces do
    table.insert(lines, prefix .. pieces[index])
  end
  write(buffer, -2, -1, lines)
  follow(buffer)
end

function M.replace_line(buffer, lnum, text)
  write(buffer, lnum - 1, lnum, { text })
end

--- Replaces the lines from `lnum` to the end with `lines` (none: removes them). Only for a
--- region at the end of the transcript, so no recorded fold range moves.
function M.replace_tail(buffer, lnum, lines)
  write(buffer, lnum - 1, -1, lines)
  follow(buffer)
end

function M.line_count(buffer)
  return line_count(buffer)
end

--- The fold ranges of `buffer` (to move them into another buffer with `replace_line_with`).
function M.folds_of(buffer)
  return folds[buffer] or {}
end

--- Replaces line `lnum` with `lines` whose own fold ranges (numbered from 1) are `new_folds`:
--- the one change in the middle of the transcript, for an earlier page of the history put in
--- place of the line that offered it. Fold ranges below move down with their lines.
function M.replace_line_with(buffer, lnum, lines, new_folds)
  local delta = #lines - 1
  for _, fold in ipairs(folds[buffer] or {}) do
    if fold.start > lnum then
      fold.start = fold.start + delta
    end
    if fold.stop and fold.stop > lnum then
      fold.stop = fold.stop + delta
    end
  end
  for _, fold in ipairs(new_folds) do
    add_fold(buffer, { start = fold.start + lnum - 1, stop = fold.stop and (fold.stop + lnum - 1) })
  end
  write(buffer, lnum - 1, lnum, lines)
  return delta
end

--- Records a fold `{start, stop}` (before its lines are written: see `open_fold`).
function M.add_fold(buffer, fold)
  add_fold(buffer, fold)
end

--- Starts a fold at the next line; it grows with the transcript until `close_fold`. Recorded
--- before its lines exist, because Neovim evaluates foldexpr as lines are added.
function M.open_fold(buffer)
  return add_fold(buffer, { start = M.next_line(buffer) })
end

function M.close_fold(buffer, fold)
  fold.stop = line_count(buffer)
end

--- Appends `lines` as one closed fold.
function M.append_folded(buffer, lines)
  local start = M.next_line(buffer)
  add_fold(buffer, { start = start, stop = start + #lines - 1 })
  M.append(buffer, lines)
end

--- `foldexpr` of the chat window.
function M.foldexpr(lnum)
  local ranges = folds[vim.api.nvim_get_current_buf()] or {}
  for index = #ranges, 1, -1 do
    local fold = ranges[index]
    local stop = fold.stop or math.huge
    if lnum == fold.start then
      return ">1"
    elseif lnum > fold.start and lnum <= stop then
      return lnum == stop and "<1" or "1"
    end
  end
  return "0"
end

function M.foldtext()
  local first = vim.fn.getline(vim.v.foldstart)
  return ("%s  [%d lines]"):format(first, vim.v.foldend - vim.v.foldstart + 1)
end

return M
