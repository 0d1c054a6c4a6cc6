-- What the :Pi… commands and the chat and tree keymaps do: each action sends its request and
-- shows the outcome (a chat notice, the prompt input, a message). Nothing here blocks the UI.
local api = require("pi.api")
local chat = require("pi.chat")
local status = require("pi.status")
local util = require("pi.util")

local M = {}

local NOTHING_TO_COMPACT = -32010

local function refresh_views()
  status.refresh()
  require("pi.tree").refresh()
end

local function failed(method, err)
  util.error(("%s failed: %s"):format(method, err.message or vim.inspect(err)))
end

--- Sends `text` as a prompt and opens the chat; without text only opens the prompt input.
--- While a turn runs the prompt is queued after it, or with `options.steer` delivered into it.
function M.prompt(text, options)
  if text == nil or vim.trim(text) == "" then
    chat.focus_prompt(true)
    return
  end
  chat.open()
  local params = { text = text, streamingBehavior = (options and options.steer) and "steer" or nil }
  -- Failures show once, in the chat: a failed turn's error is rendered from its events.
  api.prompt(params, function(err)
    -- A queued prompt taken back (edited away, or restored into the input by abort) is no failure.
    if err and not require("pi.queue").taken_back(err) then
      -- A missing key's message already names :PiLogin and the provider.
      chat.notice("prompt failed: " .. tostring(err.message))
      status.set_activity(nil)
    end
  end)
end

function M.chat()
  chat.open()
end

--- Stops the running turn; the queued prompts come back into the prompt input first.
function M.abort()
  require("pi.queue").take_back_and_abort(function(result)
    if not result.aborted then
      vim.notify("pi: nothing to abort", vim.log.levels.INFO)
    end
  end)
end

function M.compact(instructions)
  local params = {}
  if instructions and vim.trim(instructions) ~= "" then
    params.instructions = instructions
  end
  api.compact(params, function(err)
    if err and err.code == NOTHING_TO_COMPACT then
      vim.notify("pi: " .. err.message, vim.log.levels.WARN)
    elseif err then
      failed("pi/compact", err)
    end
  end)
end

function M.earlier()
  chat.load_earlier()
end

function M.tree()
  require("pi.tree").open()
end

function M.context()
  require("pi.context").open()
end

local function navigated(result)
  if util.present(result.editorText) then
    chat.set_prompt_text(result.editorText)
    chat.show()
  end
  chat.notice("now at entry " .. tostring(result.leafId))
  refresh_views()
end

--- Moves the leaf to `id`; `options.summarize` and `options.instructions` as for pi/navigate.
--- With `options.files` the files the agent changed come along, after a preview and a choice.
function M.navigate(id, options)
  options = options or {}
  if options.summarize then
    vim.notify("pi: summarizing the branch…", vim.log.levels.INFO)
  end
  if options.files then
    return require("pi.files").go_back(id, vim.tbl_extend("force", options, { on_navigated = navigated }))
  end
  local params = { targetId = id, summarize = options.summarize or nil, instructions = options.instructions }
  api.navigate(params, api.report_error("pi/navigate", navigated))
end

function M.label(id, label)
  api.label({ entryId = id, label = label }, api.report_error("pi/label", refresh_views))
end

local function switched(what, result, clear)
  if clear then
    chat.clear()
  end
  chat.notice(("%s: session %s"):format(what, tostring(result.sessionId)))
  refresh_views()
  require("pi.queue").refresh()
end

--- Forks a new session at `id`, or at the current leaf. Without `id` the request names no entry
--- and the server forks at the leaf it has then: sent at once, it stays in order with the
--- requests after it (`:PiFork` then `:Pi go on` prompts the fork).
function M.fork(id)
  local params = (id and id ~= "") and { entryId = id } or {}
  api.fork(params, api.report_error("pi/fork", function(result)
    switched("forked into " .. (result.path or "a new session"), result)
  end))
end

function M.new_session(name)
  local params = (name and name ~= "") and { name = name } or {}
  api.new_session(params, api.report_error("pi/newSession", function(result)
    switched("new session", result, true)
  end))
end

local function session_label(session)
  local title = util.present(session.name) and session.name
    or (util.present(session.firstMessage) and session.firstMessage or "(empty)")
  local one_line = title:gsub("%s+", " ")
  return ("%s  %s  (%s messages)"):format(tostring(session.modified), one_line, tostring(session.messageCount))
end

--- Opens a session (`params`: `sessionId` or `path`) in the chat; with `target_id` the tree too,
--- at that entry (a search hit).
function M.open_session(params, target_id)
  api.open_session(params, api.report_error("pi/openSession", function(opened)
    switched(opened.readOnly and "opened read-only" or "opened", opened, true)
    api.messages({ limit = chat.HISTORY_LIMIT }, api.report_error("pi/messages", chat.history))
    if target_id then
      require("pi.tree").open(target_id)
    end
  end))
end

--- Picks a session and opens it, or runs `action` on it (rename, export, delete).
function M.sessions(action)
  action = action or "open"
  if not vim.tbl_contains(require("pi.sessions").ACTIONS, action) then
    return util.error(("unknown :PiSessions action %q (open, rename, export, delete)"):format(action))
  end
  api.sessions({}, api.report_error("pi/sessions", function(result)
    if #result.sessions == 0 then
      return vim.notify("pi: no sessions yet", vim.log.levels.INFO)
    end
    local prompt = action == "open" and "pi session" or ("pi session to " .. action)
    vim.ui.select(result.sessions, { prompt = prompt, format_item = session_label }, function(session)
      if session then
        require("pi.sessions").act(action, session)
      end
    end)
  end))
end

local function set_model(model)
  api.set_model({ model = model }, api.report_error("pi/setModel", function(result)
    vim.notify("pi: model " .. result.model, vim.log.levels.INFO)
    status.refresh()
  end))
end

--- Sets the model; without a name, picks one from the server's model table.
function M.model(model)
  if model and model ~= "" then
    return set_model(model)
  end
  api.models({}, api.report_error("pi/models", function(result)
    vim.ui.select(result.models, {
      prompt = "pi model",
      format_item = function(item)
        local key = item.available and (util.present(item.keySource) and ("key: " .. item.keySource) or "local")
          or "no key"
        local origin = item.source == "models.json" and ", models.json" or ""
        return ("%s  (%s tokens, %s%s)"):format(item.model, util.short_number(item.contextWindow), key, origin)
      end,
    }, function(item)
      if item then
        set_model(item.model)
      end
    end)
  end))
end

return M
