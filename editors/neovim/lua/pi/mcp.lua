-- :PiMcp — the MCP servers (pi/mcp): each server's state and tools in vim.ui.select, then what
-- to do with the one picked: reconnect, enable or disable it while the server runs, sign in to
-- or out of an HTTP server (OAuth), show its error and stderr tail, open its mcp.json.
-- `:PiMcp {action} {server}` acts at once.
local api = require("pi.api")
local util = require("pi.util")

local M = {}

M.ACTIONS = { "reconnect", "enable", "disable", "login", "logout" }
M.USAGE = "usage: :PiMcp [reconnect|enable|disable|login|logout {server}] or :PiMcp login {server} {redirected URL}"

--- "8 tools (2 direct, 6 codemode)".
function M.describe_tools(server)
  local parts = {}
  for exposure, count in pairs(server.toolExposures or {}) do
    table.insert(parts, ("%d %s"):format(count, exposure))
  end
  table.sort(parts)
  local exposures = #parts > 0 and (" (" .. table.concat(parts, ", ") .. ")") or ""
  return ("%d tools%s"):format(server.toolCount or 0, exposures)
end

--- One line per server, for :PiMcp and :checkhealth pi.
function M.describe(server)
  local state = server.state == "needs-auth" and "needs sign-in (:PiMcp login)" or server.state
  return ("%s: %s, %s — %s"):format(server.name, state, M.describe_tools(server), server.source)
end

local function details(server)
  local lines = { M.describe(server) }
  if util.present(server.lastError) then
    table.insert(lines, "error: " .. server.lastError)
  end
  for _, line in ipairs(vim.split(vim.trim(server.stderrTail or ""), "\n", { trimempty = true })) do
    table.insert(lines, "stderr: " .. line)
  end
  return table.concat(lines, "\n")
end

local function done(what)
  return function(err, result)
    if err then
      return util.error(("MCP %s failed: %s"):format(what, err.message or vim.inspect(err)))
    end
    vim.notify(("pi: MCP server %s: %s"):format(result.name, result.state))
  end
end

--- Servers whose sign-in waits for the browser: their redirected URL can be pasted meanwhile.
local waiting = {}

--- OAuth sign-in: the server asks Neovim to open the authorization page (window/showDocument,
--- which Neovim opens with vim.ui.open) and answers once the browser came back. A browser on
--- another machine cannot come back to this one: the address it ended on is pasted instead
--- (`redirect_url`), which finishes the sign-in that waits.
local function login(name, redirect_url)
  if not redirect_url then
    waiting[name] = true
    vim.notify(
      ("pi: signing in to MCP server %s: finish in your browser (elsewhere? :PiMcp login %s {redirected URL})…"):format(
        name,
        name
      )
    )
  end
  api.mcp_login({ name = name, redirectUrl = redirect_url }, function(err, result)
    if not redirect_url then
      waiting[name] = nil
    end
    if err then
      return util.error(("MCP sign-in failed: %s"):format(err.message or vim.inspect(err)))
    end
    if not redirect_url then
      vim.notify(("pi: signed in to MCP server %s: %s, %s"):format(name, result.state, M.describe_tools(result)))
    end
  end)
end

local function paste_redirect(name)
  vim.ui.input({ prompt = "pi: the address the browser ended on: " }, function(url)
    if url and url ~= "" then
      login(name, url)
    end
  end)
end

local function logout(name)
  api.mcp_logout({ name = name }, function(err, result)
    if err then
      return util.error(("MCP sign-out failed: %s"):format(err.message or vim.inspect(err)))
    end
    local said = result.removed and "pi: signed out of MCP server %s" or "pi: MCP server %s had no sign-in"
    vim.notify(said:format(name))
  end)
end

--- Runs `action` ("reconnect", "enable", "disable", "login", "logout") on the server `name`;
--- `login` with a `redirect_url` finishes the sign-in that waits with it.
function M.act(action, name, redirect_url)
  if action == "reconnect" then
    api.mcp_reconnect({ name = name }, done("reconnect"))
  elseif action == "enable" or action == "disable" then
    api.mcp_set_enabled({ name = name, enabled = action == "enable" }, done(action))
  elseif action == "login" then
    login(name, redirect_url)
  elseif action == "logout" then
    logout(name)
  else
    util.error(M.USAGE)
  end
end

local function choose_action(server)
  local choices = server.state == "disabled" and { "enable" } or { "reconnect", "disable" }
  if waiting[server.name] then
    table.insert(choices, 1, "paste redirected URL")
  elseif server.transport == "http" and server.state ~= "disabled" then
    table.insert(choices, 1, "login")
    if server.state ~= "needs-auth" then
      table.insert(choices, 2, "logout")
    end
  end
  vim.list_extend(choices, { "details" })
  if server.scope ~= "acp" then
    table.insert(choices, "open mcp.json")
  end
  vim.ui.select(choices, { prompt = "pi: MCP server " .. server.name }, function(choice)
    if choice == "details" then
      vim.notify(details(server))
    elseif choice == "paste redirected URL" then
      paste_redirect(server.name)
    elseif choice == "open mcp.json" then
      vim.cmd.edit(vim.fn.fnameescape(server.source))
    elseif choice then
      M.act(choice, server.name)
    end
  end)
end

--- :PiMcp: pick a server, then an action.
function M.pick()
  api.mcp({}, api.report_error("pi/mcp", function(result)
    local servers = result.servers or {}
    M.remember(servers)
    if #servers == 0 then
      return vim.notify("pi: no MCP servers (configure them in ~/.pi/agent/mcp.json or .pi/mcp.json)")
    end
    vim.ui.select(servers, { prompt = "pi: MCP servers", format_item = M.describe }, function(server)
      if server then
        choose_action(server)
      end
    end)
  end))
end

--- Names of the servers, for completion (nil until the server has listed them).
M.names = {}

function M.remember(servers)
  M.names = vim.tbl_map(function(server)
    return server.name
  end, servers or {})
end

return M
