-- The one pi-lsp client of this Neovim: started on first use, reused afterwards. It finds the
-- project root, waits for the server's initialize before sending anything, and hands the server's
-- pi/* notifications to the modules that subscribed to them.
local compat = require("pi.compat")
local config = require("pi.config")

local M = {}

local NAME = "pi"
local NOTIFICATIONS = { "pi/event", "pi/resourcesChanged" }

local state = { client_id = nil, waiting = {}, listeners = {} }
for _, method in ipairs(NOTIFICATIONS) do
  state.listeners[method] = {}
end

--- Calls `fn(params)` for every notification `method` ("pi/event" or "pi/resourcesChanged").
function M.on(method, fn)
  assert(state.listeners[method], "pi: no such notification: " .. tostring(method))
  table.insert(state.listeners[method], fn)
end

local function deliver(method, params)
  for _, fn in ipairs(state.listeners[method]) do
    local ok, problem = xpcall(fn, debug.traceback, params)
    if not ok then
      vim.notify(("pi: handling %s failed: %s"):format(method, problem), vim.log.levels.ERROR)
    end
  end
end

local function handlers()
  -- pi's permission questions are asked in the chat when it is shown (permissions.lua).
  local result = { ["window/showMessageRequest"] = require("pi.permissions").handler }
  for _, method in ipairs(NOTIFICATIONS) do
    -- Scheduled so rendering never runs in a fast event; the queue keeps the server's order.
    result[method] = function(_, params)
      vim.schedule(function()
        deliver(method, params)
      end)
    end
  end
  return result
end

--- The project the agent works in: the nearest root marker above the current file, else cwd.
function M.root_dir()
  local buffer = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(buffer)
  local from = (vim.bo[buffer].buftype == "" and name ~= "") and vim.fs.dirname(name) or vim.fn.getcwd()
  return vim.fs.root(from, config.options.root_markers) or vim.fn.getcwd()
end

local function flush_waiting(client)
  local waiting = state.waiting
  state.waiting = {}
  for _, fn in ipairs(waiting) do
    fn(client)
  end
end

local function on_exit(code, signal)
  state.client_id = nil
  state.waiting = {}
  vim.schedule(function()
    require("pi.buffers").detach()
    if code ~= 0 then
      vim.notify(("pi: the server exited (code %s, signal %s); see :LspLog"):format(code, signal), vim.log.levels.ERROR)
    end
  end)
end

-- An empty Lua table would reach the server as a JSON list.
local function server_settings()
  local settings = config.options.settings
  return vim.tbl_isempty(settings) and vim.empty_dict() or settings
end

--- The token a `pi-lsp --tcp` server wrote to `path`; raises with a message saying what is wrong.
function M.read_token(path)
  local file, problem = io.open(vim.fs.normalize(path), "r")
  if not file then
    error(("cannot read the TCP token file (tcp.token_file): %s"):format(problem), 0)
  end
  local token = vim.trim(file:read("*a") or "")
  file:close()
  if token == "" then
    error(("the TCP token file %s is empty"):format(path), 0)
  end
  return token
end

-- Over TCP the client connects to a running server and proves it may drive it with the token
-- (initializationOptions only: workspace/configuration answers never carry it).
local function transport(options, settings)
  if not options.tcp then
    return (config.server_cmd()), settings
  end
  local host, port = config.parse_address(options.tcp.address)
  local init_options = vim.tbl_extend("force", {}, settings, { token = M.read_token(options.tcp.token_file) })
  return vim.lsp.rpc.connect(host, port), init_options
end

local function client_config()
  local options = config.options
  local settings = server_settings()
  local cmd, init_options = transport(options, settings)
  return {
    name = NAME,
    cmd = cmd,
    cmd_env = options.cmd_env,
    root_dir = M.root_dir(),
    init_options = init_options,
    settings = { pi = settings },
    handlers = handlers(),
    on_init = function(client)
      vim.schedule(function()
        if options.attach_buffers then
          require("pi.buffers").attach(client.id, client.config.root_dir)
        end
        flush_waiting(client)
      end)
    end,
    on_exit = on_exit,
  }
end

--- The running client, or nil.
function M.get()
  return state.client_id and vim.lsp.get_client_by_id(state.client_id) or nil
end

local function start()
  require("pi.events").subscribe()
  local cmd, source = config.server_cmd()
  if not config.options.tcp and vim.fn.executable(cmd[1]) ~= 1 then
    local hint = source == "setup({ cmd })" and "fix cmd in require('pi').setup()"
      or "run :PiInstall, or put pi-lsp on PATH, or set cmd in require('pi').setup()"
    vim.notify(("pi: the server command %q is not executable: %s"):format(cmd[1], hint), vim.log.levels.ERROR)
    return nil
  end
  local ok, id = pcall(function()
    return compat.start_client(client_config())
  end)
  if not ok or not id then
    vim.notify("pi: could not start the server: " .. tostring(id), vim.log.levels.ERROR)
    return nil
  end
  state.client_id = id
  return id
end

--- Calls `fn(client)` once the server is initialized, starting it first when needed.
function M.with_client(fn)
  local client = M.get()
  if client and client.initialized then
    return fn(client)
  end
  if not client and not start() then
    return
  end
  table.insert(state.waiting, fn)
end

--- Sends a request; `callback(err, result)` runs on the main loop.
function M.request(method, params, callback)
  M.with_client(function(client)
    compat.request(client, method, params, function(err, result)
      vim.schedule(function()
        callback(err, result)
      end)
    end)
  end)
end

--- Blocks until the server is initialized (for :checkhealth and tests); returns the client or nil.
function M.start_and_wait(timeout_ms)
  local ready
  M.with_client(function(client)
    ready = client
  end)
  vim.wait(timeout_ms, function()
    return ready ~= nil or M.get() == nil
  end, 20)
  return ready
end

--- Hands the current settings to a running server, which asks for them again
--- (workspace/configuration) and uses them from the next turn on.
function M.push_settings()
  local client = M.get()
  if not client then
    return
  end
  local settings = { pi = server_settings() }
  client.settings = settings -- what Neovim answers workspace/configuration from (0.11+)
  client.config.settings = settings -- the same for 0.10
  compat.notify(client, "workspace/didChangeConfiguration", { settings = settings })
end

function M.stop()
  local client = M.get()
  if client then
    compat.stop(client)
  end
end

return M
