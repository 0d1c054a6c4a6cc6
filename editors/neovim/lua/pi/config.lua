-- The plugin's options: defaults, validation of what `setup()` receives, and the current values.
-- Validation happens once, in `setup()`, so the rest of the plugin can trust `config.options`.
local compat = require("pi.compat")

local M = {}

M.defaults = {
  -- The server command; a list, as for `vim.lsp.start`. nil: the pi-lsp of :PiInstall's
  -- virtualenv when it exists, else pi-lsp on PATH (see `server_cmd()`).
  cmd = nil,
  -- Extra environment for the server process.
  cmd_env = nil,
  -- Connect to a pi-lsp already serving TCP (`pi-lsp --tcp 127.0.0.1:7777`) instead of starting
  -- `cmd`: { address = "127.0.0.1:7777", token_file = "/path/printed/by/pi-lsp" }. The token is
  -- read from the file at every start and sent as initializationOptions.token.
  tcp = nil,
  -- Files or directories that mark a project root (the workspace the agent works in).
  root_markers = { ".pi", ".git", "AGENTS.md" },
  -- Attach the project's file buffers, so the agent reads their unsaved text and its edits
  -- arrive as undoable buffer changes.
  attach_buffers = true,
  -- Sent as initializationOptions and answered to workspace/configuration (section "pi").
  -- Keys: model, apiBase, contextWindow, thinkingLevel, tokenizer, cacheRetention, sessionDir,
  -- allowedSessionDirs, trusted, sessionIndex, sessionSearchTools, autoName, steeringMode,
  -- followUpMode ("one-at-a-time" or "all"; default: pi's settings), retry, compaction,
  -- checkpoints (see docs/protocol.md, "Configuration").
  settings = {},
  window = {
    -- "vsplit", "split", "tab" or "current".
    layout = "vsplit",
    -- Columns (vsplit) or lines (split); a number below 1 is a fraction of the editor.
    size = 0.4,
    -- Lines of the prompt input under the chat.
    prompt_height = 4,
    -- Width of the tree window; a number below 1 is a fraction of the editor.
    tree_size = 0.4,
  },
  -- Where :PiSearch shows its hits: "auto" (telescope when installed, else fzf-lua, else the
  -- location list), "telescope", "fzf-lua" or "loclist".
  search_picker = "auto",
  -- Fold thinking text and tool results in the chat (zo opens a fold).
  fold = { thinking = true, tool_results = true },
  -- false disables a mapping.
  keymaps = {
    chat = {
      abort = "<C-c>",
      compact = "gC",
      tree = "gt",
      prompt = "i",
      close = "q",
      earlier = "[h",
      open = "<CR>",
      -- A permission question shown in the chat (under the running call's card).
      allow = "a",
      allow_session = "A",
      deny = "d",
    },
    prompt = { send = "<CR>", send_insert = "<C-s>", abort = "<C-c>", close = "q" },
    tree = {
      navigate = "<CR>",
      summarize = "s",
      summarize_with_instructions = "S",
      restore = "r",
      fork = "f",
      label = "l",
      expand = "o",
      search = "/",
      refresh = "R",
      close = "q",
    },
    context = { open = "<CR>", forget = "x", replace = "c", restore = "u", refresh = "R", close = "q" },
    -- The queue under the prompt input (prompts sent while a turn runs).
    queue = { edit = "<CR>", remove = "dd" },
  },
}

M.options = vim.deepcopy(M.defaults)

local SETTING_TYPES = {
  model = "string",
  apiBase = "string",
  contextWindow = "number",
  thinkingLevel = "string",
  tokenizer = "string",
  cacheRetention = "string",
  sessionDir = "string",
  allowedSessionDirs = "table",
  trusted = "boolean",
  nestedContextFiles = "boolean",
  sessionIndex = "boolean",
  sessionSearchTools = "boolean",
  autoName = "boolean",
  steeringMode = "string",
  followUpMode = "string",
  retry = "table",
  compaction = "table",
  checkpoints = "table",
  permissions = "table",
}

local LAYOUTS = { vsplit = true, split = true, tab = true, current = true }
local SEARCH_PICKERS = { auto = true, telescope = true, ["fzf-lua"] = true, loclist = true }

local function is_keymap(value)
  return value == false or type(value) == "string"
end

local function validate_cmd(cmd)
  compat.validate("cmd", cmd, "table")
  if #cmd == 0 then
    error("cmd: expected a non-empty list such as { \"pi-lsp\" }", 0)
  end
  for index, part in ipairs(cmd) do
    if type(part) ~= "string" then
      error(("cmd[%d]: expected string, got %s"):format(index, type(part)), 0)
    end
  end
end

local function validate_settings(settings)
  compat.validate("settings", settings, "table")
  for key, value in pairs(settings) do
    local expected = SETTING_TYPES[key]
    if expected == nil then
      error(("settings.%s: unknown setting; known: %s"):format(key, table.concat(vim.tbl_keys(SETTING_TYPES), ", ")), 0)
    end
    compat.validate("settings." .. key, value, expected)
  end
end

local function validate_window(window)
  compat.validate("window", window, "table")
  compat.validate("window.layout", window.layout, "string")
  if not LAYOUTS[window.layout] then
    error(("window.layout: expected vsplit, split, tab or current, got %q"):format(window.layout), 0)
  end
  compat.validate("window.size", window.size, "number")
  compat.validate("window.prompt_height", window.prompt_height, "number")
  compat.validate("window.tree_size", window.tree_size, "number")
end

local function validate_keymaps(keymaps)
  compat.validate("keymaps", keymaps, "table")
  for group, defaults in pairs(M.defaults.keymaps) do
    compat.validate("keymaps." .. group, keymaps[group], "table")
    for action in pairs(keymaps[group]) do
      if defaults[action] == nil then
        error(("keymaps.%s.%s: unknown action"):format(group, action), 0)
      end
      if not is_keymap(keymaps[group][action]) then
        error(("keymaps.%s.%s: expected a key string or false"):format(group, action), 0)
      end
    end
  end
end

-- "HOST:PORT" or "[IPV6]:PORT" → host, port; nil when malformed.
function M.parse_address(address)
  local host, port = address:match("^%[(.+)%]:(%d+)$")
  if not host then
    host, port = address:match("^([^:]+):(%d+)$")
  end
  port = tonumber(port)
  if not host or not port or port < 1 or port > 65535 then
    return nil
  end
  return host, port
end

local function validate_tcp(tcp)
  compat.validate("tcp", tcp, "table", true)
  if tcp == nil then
    return
  end
  compat.validate("tcp.address", tcp.address, "string")
  compat.validate("tcp.token_file", tcp.token_file, "string")
  if not M.parse_address(tcp.address) then
    error(("tcp.address: expected HOST:PORT such as \"127.0.0.1:7777\", got %q"):format(tcp.address), 0)
  end
  for key in pairs(tcp) do
    if key ~= "address" and key ~= "token_file" then
      error(("tcp.%s: unknown option; known: address, token_file"):format(key), 0)
    end
  end
end

local function validate(options)
  if options.cmd ~= nil then
    validate_cmd(options.cmd)
  end
  compat.validate("cmd_env", options.cmd_env, "table", true)
  validate_tcp(options.tcp)
  compat.validate("root_markers", options.root_markers, "table")
  compat.validate("attach_buffers", options.attach_buffers, "boolean")
  validate_settings(options.settings)
  validate_window(options.window)
  compat.validate("fold", options.fold, "table")
  validate_keymaps(options.keymaps)
  if not SEARCH_PICKERS[options.search_picker] then
    error(("search_picker: expected auto, telescope, fzf-lua or loclist, got %s"):format(
      vim.inspect(options.search_picker)), 0)
  end
end

local function check_known_keys(opts)
  for key in pairs(opts) do
    if M.defaults[key] == nil and key ~= "cmd" and key ~= "cmd_env" and key ~= "tcp" then
      error(("%s: unknown option"):format(key), 0)
    end
  end
end

--- The server command and where it comes from: setup()'s `cmd`, else the pi-lsp that
--- :PiInstall put in its virtualenv, else pi-lsp on PATH.
function M.server_cmd()
  if M.options.cmd then
    return M.options.cmd, "setup({ cmd })"
  end
  local installed = require("pi.install").paths().server
  if vim.fn.executable(installed) == 1 then
    return { installed }, ":PiInstall's virtualenv"
  end
  return { "pi-lsp" }, "pi-lsp on PATH"
end

--- Merges `opts` over the defaults (never over earlier options, so setup() is idempotent).
--- Returns true, or false and the message of what is wrong (the options are then unchanged).
function M.apply(opts)
  local ok, result = pcall(function()
    compat.validate("opts", opts, "table", true)
    opts = opts or {}
    check_known_keys(opts)
    local merged = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts)
    -- A list given by the user replaces the default list instead of merging index by index.
    merged.cmd = opts.cmd or merged.cmd
    merged.root_markers = opts.root_markers or merged.root_markers
    validate(merged)
    return merged
  end)
  if not ok then
    return false, tostring(result)
  end
  M.options = result
  return true
end

return M
