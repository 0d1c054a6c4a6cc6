-- The queue under the prompt input: the prompts sent while a turn runs and not yet taken by the
-- agent (steering first, then follow-ups, the order the agent takes them), in a small buffer
-- (filetype pi-queue) shown under the prompt while it holds any. A prompt can be edited or taken
-- out of the queue there; aborting first takes the whole queue back into the prompt input, as
-- pi's Esc does, so nothing typed is lost.
local config = require("pi.config")
local util = require("pi.util")

local M = {}

local QUEUE_NAME = "pi://queue"
local TAKEN_BACK = -32016 -- the queued prompt was taken back before the agent read it

local state = { steering = {}, followUp = {} }
local rows = {} -- line number → { id, text }
local buffer = nil

local function api()
  return require("pi.api")
end

--- The queued prompts, in the order the agent takes them: { kind, id, text } each.
function M.prompts()
  local prompts = {}
  for _, kind in ipairs({ "steering", "followUp" }) do
    for _, prompt in ipairs(state[kind] or {}) do
      table.insert(prompts, { kind = kind, id = prompt.id, text = prompt.text })
    end
  end
  return prompts
end

local function row_at_cursor()
  return rows[vim.api.nvim_win_get_cursor(0)[1]]
end

local function remove_at_cursor()
  local row = row_at_cursor()
  if row then
    api().remove_queued({ id = row.id }, api().report_error("pi/removeQueued"))
  end
end

local function edit_at_cursor()
  local row = row_at_cursor()
  if not row then
    return
  end
  vim.ui.input({ prompt = "Queued prompt: ", default = row.text }, function(text)
    if text and vim.trim(text) ~= "" and text ~= row.text then
      api().edit_queued({ id = row.id, text = text }, api().report_error("pi/editQueued"))
    end
  end)
end

local function queue_buffer()
  if buffer == nil or not vim.api.nvim_buf_is_valid(buffer) then
    buffer = util.scratch_buffer(QUEUE_NAME, "pi-queue", false)
    local keys = config.options.keymaps.queue
    local function map(lhs, rhs, desc)
      if lhs then
        vim.keymap.set("n", lhs, rhs, { buffer = buffer, nowait = true, desc = "pi: " .. desc })
      end
    end
    map(keys.remove, remove_at_cursor, "take the prompt out of the queue")
    map(keys.edit, edit_at_cursor, "edit the queued prompt")
  end
  return buffer
end

--- The queue's lines: `steer › text` / `follow-up › text`, one line per prompt.
function M.lines()
  local lines = {}
  rows = {}
  for _, prompt in ipairs(M.prompts()) do
    local first_line = vim.split(prompt.text, "\n", { plain = true })[1]
    local more = prompt.text:find("\n", 1, true) and " …" or ""
    local kind = prompt.kind == "steering" and "steer" or "follow-up"
    table.insert(lines, ("%s › %s%s"):format(kind, first_line, more))
    rows[#lines] = { id = prompt.id, text = prompt.text }
  end
  return lines
end

local function show(lines)
  local queue = queue_buffer()
  vim.bo[queue].modifiable = true
  vim.api.nvim_buf_set_lines(queue, 0, -1, false, lines)
  vim.bo[queue].modifiable = false
  local window = util.window_showing(queue)
  if #lines == 0 then
    if window and #vim.api.nvim_tabpage_list_wins(0) > 1 then
      vim.api.nvim_win_close(window, true)
    end
    return
  end
  local prompt_window = util.window_showing(require("pi.chat").prompt_buffer())
  if window then
    vim.api.nvim_win_set_height(window, math.min(#lines, 5))
  elseif prompt_window then
    local current = vim.api.nvim_get_current_win()
    vim.api.nvim_set_current_win(prompt_window)
    vim.cmd("belowright " .. math.min(#lines, 5) .. "split")
    window = vim.api.nvim_get_current_win()
    vim.api.nvim_win_set_buf(window, queue)
    vim.wo[window].winfixheight = true
    local keys = config.options.keymaps.queue
    vim.wo[window].statusline = (" pi-queue %%= edit: %s  remove: %s "):format(keys.edit or "-", keys.remove or "-")
    vim.api.nvim_set_current_win(current)
  end
end

--- A queue_update event (both lists whole).
function M.on_update(event)
  state = { steering = event.steering or {}, followUp = event.followUp or {} }
  show(M.lines())
end

--- Reads the shown session's queue again (after a switch to another session).
function M.refresh()
  api().queue({}, function(err, result)
    if not err and result then
      M.on_update(result)
    end
  end)
end

--- Whether a pi/prompt error only says that its queued prompt was taken back.
function M.taken_back(err)
  return err ~= nil and err.code == TAKEN_BACK
end

--- Takes every queued prompt back into the prompt input (before what it holds), then aborts the
--- turn: pi's Esc (`pi/abort` alone keeps the queue for the next prompt).
function M.take_back_and_abort(on_aborted)
  api().clear_queue({}, function(err, result)
    if err then
      util.error("pi/clearQueue failed: " .. tostring(err.message))
    elseif result then
      local texts = vim.list_extend(vim.list_extend({}, result.steering or {}), result.followUp or {})
      if #texts > 0 then
        local chat = require("pi.chat")
        local current = chat.prompt_text()
        if vim.trim(current) ~= "" then
          table.insert(texts, current)
        end
        chat.set_prompt_text(table.concat(texts, "\n\n"))
      end
    end
    api().abort({}, api().report_error("pi/abort", on_aborted))
  end)
end

return M
