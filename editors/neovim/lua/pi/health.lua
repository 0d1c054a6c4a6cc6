-- :checkhealth pi — which server command runs (setup's cmd, :PiInstall's virtualenv or PATH),
-- its version and whether it is the plugin's, does it start, is a model configured, can sessions
-- be written. It may block (health checks are synchronous by nature).
local compat = require("pi.compat")
local config = require("pi.config")
local util = require("pi.util")

local M = {}

local START_TIMEOUT_MS = 15000
local REQUEST_TIMEOUT_MS = 5000

-- Over TCP nothing is started: the token file must be readable, the server already running.
local function check_tcp(tcp)
  local ok, problem = pcall(require("pi.client").read_token, tcp.token_file)
  if not ok then
    vim.health.error(problem, {
      "Start the server with: pi-lsp --tcp " .. tcp.address .. " --token-file " .. tcp.token_file,
    })
    return false
  end
  vim.health.ok(("connecting over TCP to %s (token from %s)"):format(tcp.address, tcp.token_file))
  return true
end

local function check_command()
  local tcp = config.options.tcp
  if tcp then
    return check_tcp(tcp)
  end
  local cmd, source = config.server_cmd()
  local path = vim.fn.exepath(cmd[1])
  if path == "" then
    local advice = source == "setup({ cmd })"
        and { "Fix cmd in require('pi').setup({ cmd = { '/path/to/pi-lsp' } })", "Or remove cmd and run :PiInstall" }
      or {
        "Run :PiInstall (installs the server into " .. require("pi.install").paths().venv .. ")",
        "Or put pi-lsp on PATH: pipx install pi-lsp",
      }
    vim.health.error(("server command %q not found (%s)"):format(cmd[1], source), advice)
    return false
  end
  vim.health.ok(("server command found: %s (%s)"):format(path, source))
  return true
end

-- `pi-lsp --version` only works when cmd is the pi-lsp executable itself, not a wrapper.
local function check_version()
  local cmd, source = config.server_cmd()
  cmd = vim.list_extend(vim.deepcopy(cmd), { "--version" })
  local ok, done = pcall(function()
    return vim.system(cmd, { text = true, env = config.options.cmd_env }):wait(REQUEST_TIMEOUT_MS)
  end)
  local version = ok and done.code == 0 and vim.trim(done.stdout or ""):match("^pi%-lsp (%S+)")
  if not version then
    vim.health.info("`" .. table.concat(cmd, " ") .. "` gave no version; the server's own answer follows")
    return
  end
  local plugin = require("pi.install").plugin_version()
  if plugin == nil then
    local unknown = "version: pi-lsp %s (the plugin's version is unknown: it is not inside a pi-lsp repository)"
    vim.health.ok(unknown:format(version))
  elseif plugin == version then
    vim.health.ok(("version: pi-lsp %s, the plugin's version"):format(version))
  else
    local advice = source == ":PiInstall's virtualenv" and "Run :PiInstall to install the plugin's version"
      or "Upgrade the server to the plugin's version (pipx upgrade pi-lsp), or remove it and run :PiInstall"
    vim.health.warn(("version: pi-lsp %s, but the plugin is %s"):format(version, plugin), { advice })
  end
end

local function check_started()
  local client = require("pi.client").start_and_wait(START_TIMEOUT_MS)
  if not client then
    vim.health.error("the server did not start within " .. START_TIMEOUT_MS / 1000 .. " s", { "See :LspLog" })
    return nil
  end
  local info = client.server_info or {}
  vim.health.ok(
    ("server started: %s %s (root %s)"):format(
      info.name or "?",
      info.version or "?",
      tostring(client.config.root_dir)
    )
  )
  return client
end

local KEY_SOURCES = {
  editor = "the editor",
  ["auth.json"] = "pi's auth.json",
  ["models.json"] = "pi's models.json",
  environment = "the environment",
}

local function check_model(state)
  local model = state.model
  if not util.present(model) then
    vim.health.warn("no model configured", {
      "require('pi').setup({ settings = { model = 'openai/gpt-4o' } })",
      "or store a provider's key with :PiLogin {provider}, or set PI_LSP_MODEL",
    })
  elseif model.keyStatus == "missing" then
    vim.health.warn(("model %s: %s has no API key"):format(model.model, model.provider), {
      (":PiLogin %s, or set its environment variable"):format(model.provider),
    })
  elseif util.present(model.keySource) then
    vim.health.ok(("model %s, key from %s"):format(model.model, KEY_SOURCES[model.keySource] or model.keySource))
  else
    vim.health.ok(("model %s (%s)"):format(model.model, model.keyStatus == "local" and "local" or "no key needed"))
  end
end

-- The session file may not exist yet (it is written at the first message); its directory must be writable.
local function writable_dir(path)
  local dir = vim.fs.dirname(path)
  while dir and vim.fn.isdirectory(dir) == 0 do
    local parent = vim.fs.dirname(dir)
    if parent == dir then
      return false
    end
    dir = parent
  end
  return dir and vim.fn.filewritable(dir) == 2, dir
end

local function check_session_dir(state)
  if not util.present(state.path) then
    vim.health.warn("the server reported no session file")
    return
  end
  local ok, dir = writable_dir(state.path)
  if ok then
    vim.health.ok("session dir writable: " .. vim.fs.dirname(state.path))
  else
    vim.health.error("session dir not writable: " .. tostring(dir or state.path), {
      "Set another one: require('pi').setup({ settings = { sessionDir = '...' } })",
    })
  end
end

-- MCP servers: each one's state; a failed one with its error and the end of its stderr.
local function check_mcp(client)
  vim.health.start("pi: MCP servers")
  local response = compat.request_sync(client, "pi/mcp", vim.empty_dict(), REQUEST_TIMEOUT_MS)
  if not response or response.err then
    vim.health.error("pi/mcp failed: " .. vim.inspect(response and response.err or "timeout"))
    return
  end
  local mcp = require("pi.mcp")
  local servers = response.result.servers or {}
  mcp.remember(servers)
  if #servers == 0 then
    vim.health.info("no MCP servers configured (~/.pi/agent/mcp.json, .pi/mcp.json in trusted workspaces)")
  end
  for _, server in ipairs(servers) do
    if server.state == "connected" or server.state == "disabled" then
      vim.health.ok(mcp.describe(server))
    elseif server.state == "connecting" then
      vim.health.info(mcp.describe(server))
    else
      local advice = { (server.state == "needs-auth" and ":PiMcp login " or ":PiMcp reconnect ") .. server.name }
      if util.present(server.lastError) then
        table.insert(advice, 1, "error: " .. server.lastError)
      end
      local tail = vim.split(vim.trim(server.stderrTail or ""), "\n", { trimempty = true })
      for index = math.max(1, #tail - 4), #tail do
        table.insert(advice, "stderr: " .. tail[index])
      end
      vim.health.error(mcp.describe(server), advice)
    end
  end
end

local function check_neovim()
  if vim.fn.has("nvim-0.10") == 1 then
    vim.health.ok("Neovim " .. tostring(vim.version()))
  else
    vim.health.error("Neovim 0.10 or newer is needed, this is " .. tostring(vim.version()))
  end
end

function M.check()
  vim.health.start("pi")
  check_neovim()
  if not check_command() then
    return
  end
  if not config.options.tcp then
    check_version()
  end
  local client = check_started()
  if not client then
    return
  end
  local response = compat.request_sync(client, "pi/state", vim.empty_dict(), REQUEST_TIMEOUT_MS)
  if not response or response.err then
    vim.health.error("pi/state failed: " .. vim.inspect(response and response.err or "timeout"))
    return
  end
  check_model(response.result)
  check_session_dir(response.result)
  check_mcp(client)
end

return M
