-- Permission questions: the server asks with the standard window/showMessageRequest, offering
-- "Allow", "Allow for this session" and "Deny". While a window shows the chat, the question goes
-- under the running call's card and the chat's keys answer it (`a`, `A`, `d` by default); else,
-- or once the chat's last window closes or the chat shows another session, vim.ui.select asks,
-- as Neovim's own handler does. Any other showMessageRequest goes to Neovim's handler. A question
-- the call's end or the turn's end overtakes (the server withdrew it: a timeout, an abort) leaves
-- the chat; its late answer is ignored by the server.
local util = require("pi.util")

local M = {}

M.ANSWERS = { "Allow", "Allow for this session", "Deny" }
local PREFIX = "    ? "
local METHOD = "window/showMessageRequest"

-- The question waiting in the chat: `{actions, params, resume = fn(answer), watch = autocmd id}`,
-- or nil.
local waiting = nil

--- Whether a showMessageRequest is one of pi's permission questions (by its three actions).
function M.is_question(params)
  local actions = type(params) == "table" and params.actions or nil
  if type(actions) ~= "table" or #actions ~= #M.ANSWERS then
    return false
  end
  for index, title in ipairs(M.ANSWERS) do
    if type(actions[index]) ~= "table" or actions[index].title ~= title then
      return false
    end
  end
  return true
end

local function chat()
  return require("pi.chat")
end

--- The chat lines of a question: its message, then which key gives which answer.
function M.lines(message, keys)
  local lines = vim.tbl_map(function(line)
    return PREFIX .. line
  end, vim.split(tostring(message), "\n", { plain = true }))
  local offered = {}
  local choices = { { keys.allow, "allow" }, { keys.allow_session, "allow for this session" }, { keys.deny, "deny" } }
  for _, choice in ipairs(choices) do
    if choice[1] then
      table.insert(offered, ("%s %s"):format(choice[1], choice[2]))
    end
  end
  local how = #offered > 0 and table.concat(offered, " · ") or "map keymaps.chat.allow, allow_session, deny"
  table.insert(lines, PREFIX .. "answer: " .. how)
  return lines
end

local function default_handler()
  return vim.lsp.handlers[METHOD]
end

-- The question leaves the chat (its keys answer nothing from now on).
local function take_back()
  local question = waiting
  waiting = nil
  pcall(vim.api.nvim_del_autocmd, question.watch)
  require("pi.render").question(chat().chat_buffer(), nil)
  return question
end

local function settle(answer)
  if waiting then
    take_back().resume(answer)
  end
end

--- Answers the question waiting in the chat with the `index`th answer (1 allow, 2 allow for the
--- session, 3 deny).
function M.answer(index)
  if not waiting then
    return vim.notify("pi: no permission question is waiting", vim.log.levels.INFO)
  end
  settle(waiting.actions[index])
end

--- The question is no longer the server's (its call or turn ended): it leaves the chat.
function M.withdraw()
  settle(vim.NIL)
end

-- The question waiting leaves the chat for vim.ui.select.
local function ask_elsewhere()
  local question = take_back()
  local params = question.params
  local options = { prompt = params.message .. ": ", kind = "lsp_message" }
  options.format_item = function(action)
    return action.title
  end
  vim.ui.select(params.actions, options, function(choice)
    question.resume(choice or vim.NIL)
  end)
end

-- The chat's last window closed while `question` waits: vim.ui.select asks instead.
local function on_chat_hidden(question)
  if waiting == question and not util.window_showing(chat().chat_buffer()) then
    ask_elsewhere()
  end
end

--- The chat was emptied (another session shown): a question waiting there is asked elsewhere.
function M.on_chat_cleared()
  if waiting then
    ask_elsewhere()
  end
end

local function ask_in_chat(params)
  local co = coroutine.running()
  local buffer = chat().chat_buffer()
  local question = { actions = params.actions, params = params }
  function question.resume(answer)
    -- scheduled: a synchronous answer must not resume before the handler yields
    vim.schedule(function()
      coroutine.resume(co, answer)
    end)
  end
  question.watch = vim.api.nvim_create_autocmd("BufWinLeave", {
    buffer = buffer,
    callback = function()
      -- the window is still there while the event runs
      vim.schedule(function()
        on_chat_hidden(question)
      end)
    end,
  })
  waiting = question
  require("pi.render").question(buffer, M.lines(params.message, require("pi.config").options.keymaps.chat))
  return coroutine.yield()
end

--- The client's handler of window/showMessageRequest.
function M.handler(err, params, ctx)
  local co, is_main = coroutine.running()
  if co and not is_main and M.is_question(params) then
    -- The call's tool_execution_start came first but is delivered scheduled (client.lua): let the
    -- events already queued draw its card before deciding where to ask.
    vim.schedule(function()
      coroutine.resume(co)
    end)
    coroutine.yield()
  end
  local shown = util.window_showing(chat().chat_buffer())
  local card = require("pi.card_tail").has_unfinished(chat().chat_buffer())
  -- Outside a coroutine (an older Neovim) the handler cannot wait for a key.
  if not M.is_question(params) or not co or is_main or not shown or not card or waiting then
    return default_handler()(err, params, ctx)
  end
  return ask_in_chat(params)
end

--- A pi/event: the end of the call asked about, or of the turn, withdraws the question.
function M.on_event(event)
  if waiting and (event.type == "tool_execution_end" or event.type == "agent_end") then
    M.withdraw()
  end
end

return M
