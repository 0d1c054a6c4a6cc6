-- Differences between Neovim 0.10 and newer releases, kept in one place so the other modules can
-- call one spelling. 0.11 moved client methods to `client:method()` and `vim.validate` to a
-- positional form; the old spellings warn as deprecated on 0.12.
local M = {}

local has_0_11 = vim.fn.has("nvim-0.11") == 1

function M.request(client, method, params, handler)
  if has_0_11 then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

function M.request_sync(client, method, params, timeout_ms)
  if has_0_11 then
    return client:request_sync(method, params, timeout_ms)
  end
  return client.request_sync(method, params, timeout_ms)
end

function M.notify(client, method, params)
  if has_0_11 then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end

function M.stop(client)
  if has_0_11 then
    return client:stop()
  end
  return client.stop()
end

--- Starts a client without attaching it to a buffer: the chat works from any buffer.
function M.start_client(config)
  if has_0_11 then
    return vim.lsp.start(config, { attach = false })
  end
  return vim.lsp.start_client(config)
end

--- `vim.validate(name, value, types, optional)`; raises with a message naming the option.
function M.validate(name, value, types, optional)
  if has_0_11 then
    vim.validate(name, value, types, optional)
  else
    vim.validate({ [name] = { value, types, optional } })
  end
end

return M
