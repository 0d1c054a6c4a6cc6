-- The :Pi… commands. Only definitions here, so loading the plugin costs nothing: the modules
-- load, and the server starts, when a command first runs.
if vim.g.loaded_pi then
  return
end
vim.g.loaded_pi = true

local function action(name)
  return function(command)
    require("pi.actions")[name](command.args ~= "" and command.args or nil)
  end
end

local function define(name, rhs, options)
  vim.api.nvim_create_user_command(name, rhs, options)
end

define("Pi", function(command)
  require("pi.actions").prompt(command.args, { steer = command.bang })
end, { nargs = "*", bang = true, desc = "pi: send a prompt (opens the chat); ! steers the running turn" })
define("PiChat", action("chat"), { nargs = 0, desc = "pi: open the chat" })
define("PiAbort", action("abort"), { nargs = 0, desc = "pi: abort the running turn" })
define("PiCompact", action("compact"), { nargs = "*", desc = "pi: compact the session [instructions]" })
define("PiTree", action("tree"), { nargs = 0, desc = "pi: open the session tree" })
define("PiTreeSearch", function(command)
  require("pi.tree").search(command.args)
end, { nargs = "*", desc = "pi: search the session tree [text] and jump to a match" })
define("PiContext", action("context"), { nargs = 0, desc = "pi: show what the next request carries" })
define("PiEarlier", action("earlier"), { nargs = 0, desc = "pi: load earlier messages into the chat" })
local function entry_ids(lead)
  return vim.tbl_filter(function(id)
    return vim.startswith(id, lead)
  end, require("pi.tree").entry_ids())
end

define("PiNavigate", function(command)
  local id, files = command.fargs[1], command.fargs[2]
  if #command.fargs > 2 or (files ~= nil and files ~= "files") then
    return vim.notify("pi: usage: :PiNavigate[!] {id} [files]", vim.log.levels.ERROR)
  end
  require("pi.actions").navigate(id, { summarize = command.bang, files = files == "files" })
end, {
  nargs = "+",
  bang = true,
  complete = function(lead, line)
    local words = #vim.split(line, "%s+") -- the command, then the arguments; "" for a new one
    if words == 2 then
      return entry_ids(lead)
    end
    return (words == 3 and vim.startswith("files", lead)) and { "files" } or {}
  end,
  desc = "pi: move the leaf to {id} (! summarizes the branch left; files takes the files along)",
})
define("PiSessions", action("sessions"), {
  nargs = "?",
  complete = function(lead)
    return vim.tbl_filter(function(name)
      return vim.startswith(name, lead)
    end, { "open", "rename", "export", "delete" })
  end,
  desc = "pi: open another session, or [rename|export|delete] one",
})
define("PiSearch", function(command)
  require("pi.sessions").search(command.args)
end, { nargs = "*", desc = "pi: search every session of the workspace [text] into the location list" })
define("PiNew", action("new_session"), { nargs = "?", desc = "pi: start a new session [name]" })
define("PiFork", action("fork"), {
  nargs = "?",
  complete = entry_ids,
  desc = "pi: fork a new session at [id] or the leaf",
})
define("PiModel", action("model"), { nargs = "?", desc = "pi: set the model [litellm model]" })
define("PiInstall", function(command)
  require("pi.install").command(command.bang)
end, { nargs = 0, bang = true, desc = "pi: install the server into a private virtualenv (! reinstalls)" })

local function providers(lead)
  return vim.tbl_filter(function(name)
    return vim.startswith(name, lead)
  end, require("pi.keys").known_providers())
end

define("PiLogin", function(command)
  require("pi.keys").login(command.args ~= "" and command.args or nil, { replace_subscription = command.bang })
end, {
  nargs = "?",
  bang = true,
  complete = providers,
  desc = "pi: store an API key for {provider} in pi's auth.json (! replaces pi's subscription login)",
})
define("PiLogout", function(command)
  require("pi.keys").logout(command.args ~= "" and command.args or nil)
end, { nargs = "?", complete = providers, desc = "pi: remove {provider}'s API key from pi's auth.json" })
define("PiMcp", function(command)
  local mcp = require("pi.mcp")
  if #command.fargs == 0 then
    return mcp.pick()
  end
  local pasted = #command.fargs == 3 and command.fargs[1] == "login"
  if #command.fargs ~= 2 and not pasted then
    return vim.notify("pi: " .. mcp.USAGE, vim.log.levels.ERROR)
  end
  mcp.act(command.fargs[1], command.fargs[2], command.fargs[3])
end, {
  nargs = "*",
  complete = function(lead, line)
    local words = #vim.split(line, "%s+")
    local mcp = require("pi.mcp")
    local candidates = words == 2 and mcp.ACTIONS or (words == 3 and mcp.names or {})
    return vim.tbl_filter(function(name)
      return vim.startswith(name, lead)
    end, candidates)
  end,
  desc = "pi: the MCP servers; or reconnect, enable, disable, login, logout {server}",
})
