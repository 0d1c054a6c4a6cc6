-- Routes the server's notifications: each pi/event goes to the chat, the statusline and an open
-- tree buffer, and is re-published as the `User PiEvent` autocommand for the user's own code.
local M = {}

local subscribed = false
local last_seq = {}

local ACTIVITY = { agent_start = "running", compaction_start = "compacting", branch_summary_start = "summarizing" }
local ENDS = { agent_end = true, compaction_end = true, branch_summary_end = true }
local REFRESHES = { agent_end = true, compaction_end = true, branch_summary_end = true, tree_changed = true }

-- seq rises by one per session; a gap means notifications were lost, so the chat may be incomplete.
local function check_seq(params)
  local previous = last_seq[params.sessionId]
  if previous and params.seq ~= previous + 1 then
    require("pi.chat").notice(("%d event(s) missing: the chat may be incomplete"):format(params.seq - previous - 1))
  end
  last_seq[params.sessionId] = params.seq
end

local function update_views(event, session_id)
  local status = require("pi.status")
  if ACTIVITY[event.type] then
    status.set_activity(ACTIVITY[event.type])
  elseif ENDS[event.type] then
    status.set_activity(nil)
  end
  -- Each answer adds to the session's cost: a long turn of tool rounds shows it growing.
  local answered = event.type == "message_end" and event.message and event.message.role == "assistant"
  if REFRESHES[event.type] or answered then
    status.refresh()
  end
  if event.type == "queue_update" then
    require("pi.queue").on_update(event)
  end
  if event.type == "tree_changed" then
    require("pi.tree").on_tree_changed(event, session_id)
    require("pi.context").on_tree_changed()
  end
end

function M.on_event(params)
  check_seq(params)
  require("pi.chat").on_event(params.event)
  require("pi.permissions").on_event(params.event)
  update_views(params.event, params.sessionId)
  vim.api.nvim_exec_autocmds("User", { pattern = "PiEvent", data = params, modeline = false })
end

local function names(changes)
  local result = {}
  for _, change in ipairs(changes or {}) do
    table.insert(result, change.name)
  end
  return result
end

function M.on_resources_changed(params)
  local parts = {}
  for _, kind in ipairs({ "added", "changed", "removed" }) do
    if #(params[kind] or {}) > 0 then
      table.insert(parts, kind .. " " .. table.concat(names(params[kind]), ", "))
    end
  end
  -- DEBUG: the first scan after start reports every file, which is no news to the user.
  vim.notify("pi: resources " .. table.concat(parts, "; "), vim.log.levels.DEBUG)
  vim.api.nvim_exec_autocmds("User", { pattern = "PiResourcesChanged", data = params, modeline = false })
end

--- Subscribes once; called when the client starts.
function M.subscribe()
  if subscribed then
    return
  end
  subscribed = true
  local client = require("pi.client")
  client.on("pi/event", M.on_event)
  client.on("pi/resourcesChanged", M.on_resources_changed)
end

return M
