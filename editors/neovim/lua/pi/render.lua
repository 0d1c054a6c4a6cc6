-- Writes the conversation into the chat buffer as pi/event notifications arrive: streamed text
-- and thinking, tool calls updated in place, notices. The buffer is only ever appended to (tool
-- lines change in place without changing the line count), so fold ranges recorded by line number
-- stay valid; `foldexpr` reads them.
local util = require("pi.util")

local M = {}

local HEADERS = { user = "## You", assistant = "## pi" }
local THINKING_PREFIX = "> "
local RESULT_INDENT = "    "
local MAX_RESULT_LINES = 200

-- Per chat buffer: the block being streamed, its fold, and where each tool call's line is.
local views = {}

local function view(buffer)
  views[buffer] = views[buffer] or { block = nil, role = nil, folds = {}, open_fold = nil, tools = {} }
  return views[buffer]
end

function M.reset(buffer)
  views[buffer] = nil
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

--- The line number the next appended line will get.
local function next_line(buffer)
  return is_empty(buffer) and 1 or line_count(buffer) + 1
end

--- Appends whole lines; returns the line number of the first one.
local function append(buffer, lines)
  if is_empty(buffer) then
    write(buffer, 0, 1, lines)
    follow(buffer)
    return 1
  end
  local first = line_count(buffer) + 1
  write(buffer, -1, -1, lines)
  follow(buffer)
  return first
end

local function close_fold(buffer)
  local current = view(buffer)
  if current.open_fold then
    current.open_fold.stop = line_count(buffer)
    current.open_fold = nil
  end
end

local function open_fold(buffer, start)
  local fold = { start = start }
  table.insert(view(buffer).folds, fold)
  view(buffer).open_fold = fold
end

local function end_block(buffer)
  close_fold(buffer)
  -- Markdown would continue the thinking quote into the next line without a blank one.
  if view(buffer).block == "thinking" then
    append(buffer, { "" })
  end
  view(buffer).block = nil
end

local function separate(buffer)
  if not is_empty(buffer) and vim.api.nvim_buf_get_lines(buffer, -2, -1, false)[1] ~= "" then
    append(buffer, { "" })
  end
end

local function header(buffer, role)
  end_block(buffer)
  separate(buffer)
  append(buffer, { HEADERS[role] })
  view(buffer).role = role
end

-- A blank line between blocks, so markdown does not run a paragraph into the next block.
local function gap(buffer)
  local last = vim.api.nvim_buf_get_lines(buffer, -2, -1, false)[1]
  if last ~= "" and not vim.startswith(last, "## ") then
    append(buffer, { "" })
  end
end

local function start_block(buffer, kind)
  end_block(buffer)
  gap(buffer)
  view(buffer).block = kind
  if kind == "thinking" then
    -- Recorded before the lines exist: Neovim evaluates foldexpr as they are added.
    if require("pi.config").options.fold.thinking then
      open_fold(buffer, next_line(buffer))
    end
    append(buffer, { "▸ thinking", THINKING_PREFIX })
  else
    append(buffer, { "" })
  end
end

--- Adds streamed text to the last line; a newline in `delta` starts a new (prefixed) line.
local function stream(buffer, kind, delta)
  if view(buffer).block ~= kind then
    start_block(buffer, kind)
  end
  local prefix = kind == "thinking" and THINKING_PREFIX or ""
  local pieces = vim.split(delta, "\n", { plain = true })
  local last = vim.api.nvim_buf_get_lines(buffer, -2, -1, false)[1]
  local lines = { last .. pieces[1] }
  for index = 2, #pieces do
    table.insert(lines, prefix .. pieces[index])
  end
  write(buffer, -2, -1, lines)
  follow(buffer)
end

--- A notice line of the chat: compaction, retry, abort, errors.
function M.notice(buffer, text)
  end_block(buffer)
  separate(buffer)
  append(buffer, { "» " .. text })
  view(buffer).role = nil
end

--- The user's message, as the server saved it.
function M.user(buffer, text)
  header(buffer, "user")
  append(buffer, vim.split(text, "\n", { plain = true }))
end

local function tool_line(name, arguments, status)
  local shown = util.present(arguments) and vim.json.encode(arguments) or ""
  return ("⚙ %s %s — %s"):format(name or "?", shown, status)
end

local function set_tool(buffer, id, name, arguments, status)
  local tools = view(buffer).tools
  local tool = tools[id]
  if tool == nil then
    if view(buffer).block ~= "tool" then
      end_block(buffer)
      gap(buffer)
      view(buffer).block = "tool"
    end
    tool = { line = append(buffer, { "" }), name = name }
    tools[id] = tool
  end
  tool.name = name or tool.name
  tool.arguments = util.present(arguments) and arguments or tool.arguments
  write(buffer, tool.line - 1, tool.line, { tool_line(tool.name, tool.arguments, status) })
end

local function result_lines(event)
  local text = util.content_text(event.content):gsub("%s+$", "")
  local lines = vim.split(text, "\n", { plain = true })
  if #lines > MAX_RESULT_LINES then
    lines = vim.list_slice(lines, 1, MAX_RESULT_LINES)
    table.insert(lines, ("… (%d lines in all)"):format(#vim.split(text, "\n", { plain = true })))
  end
  local indented = {}
  for _, line in ipairs(lines) do
    table.insert(indented, RESULT_INDENT .. line)
  end
  return indented
end

local function tool_result(buffer, event)
  local status = event.isError and "error" or "done"
  set_tool(buffer, event.toolCallId, event.name, nil, status)
  local lines = result_lines(event)
  table.insert(lines, 1, ("  ↳ %s result (%s)"):format(event.name or "tool", status))
  if require("pi.config").options.fold.tool_results then
    local first = next_line(buffer)
    table.insert(view(buffer).folds, { start = first, stop = first + #lines - 1 })
  end
  append(buffer, lines)
end

local function compaction_end(buffer, event)
  if event.aborted then
    M.notice(buffer, "compaction cancelled")
  elseif util.present(event.errorMessage) then
    M.notice(buffer, "compaction failed: " .. event.errorMessage)
  else
    local before = util.present(event.tokensBefore) and (" (" .. util.short_number(event.tokensBefore) .. " tokens summarized)") or ""
    M.notice(buffer, ("compacted%s, entry %s"):format(before, tostring(event.entryId)))
  end
end

local on = {}

function on.message_start(buffer, event)
  if event.role == "assistant" and view(buffer).role ~= "assistant" then
    header(buffer, "assistant")
  end
end

function on.message_end(buffer, event)
  local message = event.message or {}
  if message.role == "user" then
    M.user(buffer, util.content_text(message.content))
  elseif message.role == "assistant" then
    end_block(buffer)
    if message.stopReason == "error" and util.present(message.errorMessage) then
      M.notice(buffer, "error: " .. message.errorMessage)
    end
  end
end

function on.text_delta(buffer, event)
  stream(buffer, "text", event.delta or "")
end

function on.thinking_delta(buffer, event)
  stream(buffer, "thinking", event.delta or "")
end

function on.toolcall_start(buffer, event)
  set_tool(buffer, event.toolCallId, event.name, nil, "pending")
end

function on.tool_execution_start(buffer, event)
  set_tool(buffer, event.toolCallId, event.name, event.arguments, "running")
end

function on.tool_execution_end(buffer, event)
  tool_result(buffer, event)
end

function on.retry(buffer, event)
  M.notice(buffer, ("retry %s/%s in %.1fs: %s"):format(event.attempt, event.maxAttempts, (event.delayMs or 0) / 1000, tostring(event.errorMessage)))
end

function on.compaction_start(buffer, event)
  M.notice(buffer, ("compacting the session (%s)…"):format(tostring(event.reason)))
end

on.compaction_end = compaction_end

function on.agent_end(buffer, event)
  end_block(buffer)
  if event.stopReason == "aborted" then
    M.notice(buffer, "aborted")
  end
end

function on.error(buffer, event)
  M.notice(buffer, "error: " .. tostring(event.message))
end

--- Renders one pi/event `event` into `buffer`.
function M.event(buffer, event)
  local handler = on[event.type]
  if handler then
    handler(buffer, event)
  end
end

--- `foldexpr` of the chat window: the recorded thinking and tool-result ranges.
function M.foldexpr(lnum)
  local current = views[vim.api.nvim_get_current_buf()]
  if not current then
    return "0"
  end
  for index = #current.folds, 1, -1 do
    local fold = current.folds[index]
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
