-- API keys from Neovim: :PiLogin stores a provider's key in pi's auth.json (through the server's
-- pi/login, which writes the file as pi does, mode 0600, so pi itself uses the key too) and
-- :PiLogout removes it. The key is typed with inputsecret() and is never echoed or logged.
local api = require("pi.api")
local util = require("pi.util")

local M = {}

-- pi 0.84.2's providers that take an API key, for completion (models.json ones are added once
-- the server has listed them).
local KNOWN = {
  "anthropic", "openai", "google", "openrouter", "groq", "mistral", "deepseek", "xai",
  "cerebras", "together", "fireworks", "huggingface", "nvidia", "zai", "moonshotai",
  "minimax", "vercel-ai-gateway", "opencode", "kimi-coding", "amazon-bedrock",
}
local listed = {}

--- Provider names for command completion.
function M.known_providers()
  local names = vim.deepcopy(KNOWN)
  for _, name in ipairs(listed) do
    if not vim.tbl_contains(names, name) then
      table.insert(names, name)
    end
  end
  return names
end

local function describe(provider)
  if util.present(provider.keySource) then
    return ("%s  (key from %s)"):format(provider.provider, provider.keySource)
  elseif provider["local"] then
    return ("%s  (local, needs no key)"):format(provider.provider)
  elseif provider.subscription then
    return ("%s  (no key: pi's subscription login cannot be used here)"):format(provider.provider)
  end
  return ("%s  (no key)"):format(provider.provider)
end

--- Calls `fn(provider)` with the provider the user picks from the server's list.
local function pick_provider(prompt, fn)
  api.models({}, api.report_error("pi/models", function(result)
    listed = vim.tbl_map(function(provider)
      return provider.provider
    end, result.providers or {})
    vim.ui.select(result.providers or {}, { prompt = prompt, format_item = describe }, function(provider)
      if provider then
        fn(provider.provider)
      end
    end)
  end))
end

local function store(provider, options)
  local key = vim.fn.inputsecret(("pi: API key for %s: "):format(provider))
  key = vim.trim(key or "")
  if key == "" then
    return vim.notify("pi: no key given; nothing stored", vim.log.levels.WARN)
  end
  local params = { provider = provider, key = key, replaceSubscription = options.replace_subscription or nil }
  api.login(params, function(err, result)
    if err then
      return util.error(("storing the %s key failed: %s"):format(provider, err.message or vim.inspect(err)))
    end
    vim.notify(("pi: the %s API key is stored in %s (pi uses it too)"):format(provider, result.path))
    require("pi.status").refresh()
  end)
end

--- :PiLogin[!] [provider]: asks for the key (without echo) and stores it in auth.json.
function M.login(provider, options)
  options = options or {}
  if provider then
    return store(provider, options)
  end
  pick_provider("pi: store an API key for", function(chosen)
    store(chosen, options)
  end)
end

--- :PiLogout [provider]: removes the provider's API key from auth.json.
function M.logout(provider)
  local function remove(name)
    api.logout({ provider = name }, function(err, result)
      if err then
        return util.error(("removing the %s key failed: %s"):format(name, err.message or vim.inspect(err)))
      end
      local what = result.removed and "removed from" or "was not in"
      vim.notify(("pi: the %s API key %s %s"):format(name, what, result.path))
      require("pi.status").refresh()
    end)
  end
  if provider then
    return remove(provider)
  end
  pick_provider("pi: remove the API key of", remove)
end

return M
