-- The chat: a read-only buffer (filetype pi-chat) the conversation is rendered into, and under it
-- the prompt input (filetype pi-prompt) the user writes the next message in. Both buffers outlive
-- their windows, so closing the chat loses nothing.
local config = require("pi.config")
local util = require("pi.util")

local M = {}

local CHAT_NAME = "pi://chat"
local PROMPT_NAME = "pi://prompt"

local buffers = { chat = nil, prompt = nil }

local function valid(buffer)
  return buffer ~= nil and vim.api.nvim_buf_is_valid(buffer)
end

local function map(buffer, modes, lhs, rhs, desc)
  if lhs then
    vim.keymap.set(modes, lhs, rhs, { buffer = buffer, nowait = true, silent = true, desc = "pi: " .. desc })
  end
end

local function actions()
  return require("pi.actions")
end

local function chat_keymaps(buffer)
  local keys = config.options.keymaps.chat
  map(buffer, "n", keys.abort, function() actions().abort() end, "abort the running turn")
  map(buffer, "n", keys.compact, function() actions().compact() end, "compact the session")
  map(buffer, "n", keys.tree, function() actions().tree() end, "open the session tree")
  map(buffer, "n", keys.prompt, function() M.focus_prompt(true) end, "write a prompt")
  map(buffer, "n", keys.close, M.close, "close the chat")
  map(buffer, "n", keys.earlier, function() M.load_earlier() end, "load earlier messages")
  map(buffer, "n", keys.open, function() require("pi.links").open_under_cursor() end, "open the file under the cursor")
  local permissions = require("pi.permissions")
  map(buffer, "n", keys.allow, function() permissions.answer(1) end, "allow the tool call asked about")
  map(buffer, "n", keys.allow_session, function() permissions.answer(2) end, "allow it for this session")
  map(buffer, "n", keys.deny, function() permissions.answer(3) end, "deny the tool call asked about")
  -- Moving up to the line that offers the earlier history loads it.
  vim.api.nvim_create_autocmd("CursorMoved", {
    buffer = buffer,
    callback = function()
      local offered = require("pi.render").earlier(buffer)
      if offered and vim.api.nvim_win_get_cursor(0)[1] <= offered.lnum then
        M.load_earlier()
      end
    end,
  })
end

local function prompt_keymaps(buffer)
  local keys = config.options.keymaps.prompt
  map(buffer, "n", keys.send, M.send, "send the prompt")
  map(buffer, "i", keys.send_insert, function()
    vim.cmd.stopinsert()
    M.send()
  end, "send the prompt")
  map(buffer, "n", keys.abort, function() actions().abort() end, "abort the running turn")
  map(buffer, "n", keys.close, M.close, "close the chat")
end

--- The chat buffer, created on first use (events are rendered even while no window shows it).
function M.chat_buffer()
  if not valid(buffers.chat) then
    buffers.chat = util.scratch_buffer(CHAT_NAME, "pi-chat", false)
    require("pi.render").reset(buffers.chat)
    chat_keymaps(buffers.chat)
  end
  return buffers.chat
end

function M.prompt_buffer()
  if not valid(buffers.prompt) then
    buffers.prompt = util.scratch_buffer(PROMPT_NAME, "pi-prompt", true)
    prompt_keymaps(buffers.prompt)
  end
  return buffers.prompt
end

local function open_chat_window()
  local layout = config.options.window
  if layout.layout == "vsplit" then
    vim.cmd("botright vsplit")
    vim.api.nvim_win_set_width(0, util.window_size(vim.o.columns, layout.size))
  elseif layout.layout == "split" then
    vim.cmd("botright split")
    vim.api.nvim_win_set_height(0, util.window_size(vim.o.lines, layout.size))
  elseif layout.layout == "tab" then
    vim.cmd("tabnew")
  end
  local window = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(window, M.chat_buffer())
  local options = vim.wo[window]
  options.wrap, options.linebreak, options.number, options.relativenumber = true, true, false, false
  options.foldmethod = "expr"
  options.foldexpr = "v:lua.require'pi.transcript'.foldexpr(v:lnum)"
  options.foldtext = "v:lua.require'pi.transcript'.foldtext()"
  options.foldlevel = 0
  options.statusline = " pi-chat %= %{%v:lua.require'pi'.statusline()%} "
  return window
end

local function open_prompt_window(chat_window)
  vim.api.nvim_set_current_win(chat_window)
  vim.cmd("belowright split")
  local window = vim.api.nvim_get_current_win()
  vim.api.nvim_win_set_buf(window, M.prompt_buffer())
  vim.api.nvim_win_set_height(window, config.options.window.prompt_height)
  vim.wo[window].winfixheight = true
  vim.wo[window].statusline = " pi-prompt %= send: " .. (config.options.keymaps.prompt.send or "-") .. " "
  return window
end

--- Shows the chat and its prompt input (reusing windows already showing them) and focuses the
--- prompt input; returns the chat window.
function M.open()
  local chat_window = util.window_showing(M.chat_buffer()) or open_chat_window()
  local prompt_window = util.window_showing(M.prompt_buffer()) or open_prompt_window(chat_window)
  vim.api.nvim_set_current_win(prompt_window)
  return chat_window
end

--- Opens the chat without leaving the current window (to show what changed in it).
function M.show()
  local window = vim.api.nvim_get_current_win()
  M.open()
  vim.api.nvim_set_current_win(window)
end

function M.close()
  for _, buffer in ipairs({ buffers.prompt, buffers.chat }) do
    local window = valid(buffer) and util.window_showing(buffer)
    if window and #vim.api.nvim_tabpage_list_wins(0) > 1 then
      vim.api.nvim_win_close(window, false)
    end
  end
end

function M.focus_prompt(insert)
  M.open()
  if insert then
    vim.cmd.startinsert({ bang = true })
  end
end

function M.prompt_text()
  return table.concat(vim.api.nvim_buf_get_lines(M.prompt_buffer(), 0, -1, false), "\n")
end

--- Replaces the prompt input's text (after navigating onto a user message, to edit and resend).
function M.set_prompt_text(text)
  vim.api.nvim_buf_set_lines(M.prompt_buffer(), 0, -1, false, vim.split(text, "\n", { plain = true }))
end

--- Sends the prompt input's text and clears it.
function M.send()
  local text = vim.trim(M.prompt_text())
  if text == "" then
    vim.notify("pi: the prompt is empty", vim.log.levels.WARN)
    return
  end
  M.set_prompt_text("")
  actions().prompt(text)
end

--- Renders a pi/event into the chat buffer.
function M.on_event(event)
  require("pi.render").event(M.chat_buffer(), event)
end

--- Empties the chat (a new or another session starts a new conversation).
function M.clear()
  local buffer = M.chat_buffer()
  vim.bo[buffer].modifiable = true
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, {})
  vim.bo[buffer].modifiable = false
  require("pi.render").reset(buffer)
  require("pi.permissions").on_chat_cleared()
end

--- How many entries the chat loads at once: the tail of an opened session, then each earlier page.
M.HISTORY_LIMIT = 100

local loading_before = nil

--- Loads the page of history before the first entry shown, when there is one.
function M.load_earlier()
  local buffer = M.chat_buffer()
  local offered = require("pi.render").earlier(buffer)
  if not offered then
    return vim.notify("pi: the chat shows the whole conversation", vim.log.levels.INFO)
  end
  if loading_before == offered.before then
    return
  end
  loading_before = offered.before
  local api = require("pi.api")
  api.messages({ limit = M.HISTORY_LIMIT, before = offered.before }, function(err, result)
    loading_before = nil
    if err then
      return api.report_error("pi/messages", function() end)(err, result)
    end
    local still = require("pi.render").earlier(buffer)
    if result and still and still.before == offered.before then
      require("pi.render").prepend_history(buffer, result)
    end
  end)
end

--- An opened session's conversation, from a pi/messages result.
function M.history(messages)
  require("pi.render").history(M.chat_buffer(), messages)
end

--- Shows the chat with the cursor on the first line holding `text` (a message's preview).
function M.show_text(text)
  local chat_window = util.window_showing(M.chat_buffer()) or open_chat_window()
  vim.api.nvim_set_current_win(chat_window)
  local needle = vim.trim((text or ""):gsub("…$", ""))
  if needle == "" then
    return
  end
  local lines = vim.api.nvim_buf_get_lines(M.chat_buffer(), 0, -1, false)
  for lnum, line in ipairs(lines) do
    if line:find(needle:sub(1, 40), 1, true) then
      return vim.api.nvim_win_set_cursor(chat_window, { lnum, 0 })
    end
  end
  vim.notify("pi: the message is not on the chat's page (load earlier messages)", vim.log.levels.INFO)
end

function M.notice(text)
  require("pi.render").notice(M.chat_buffer(), text)
end

return M
