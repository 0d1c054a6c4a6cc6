-- One function per pi/* request of the server. Each takes the params table (camelCase keys, as on
-- the wire) and a callback `callback(err, result)`; `err` is the JSON-RPC error `{code, message}`
-- or nil. The methods, and the LuaCATS annotations of their results and of the events, come from
-- pi/protocol.lua, which `make protocol` generates from pi_lsp/protocol.py.
local client = require("pi.client")
local protocol = require("pi.protocol")

---@alias pi.Error { code: integer, message: string }
---@alias pi.Request<R> fun(params: table?, callback: (fun(err: pi.Error?, result: R?))?)

---@class pi.Api: pi.Requests
local M = {}

local function request(method)
  return function(params, callback)
    -- An empty Lua table would be sent as a JSON array; the server wants an object.
    if params == nil or vim.tbl_isempty(params) then
      params = vim.empty_dict()
    end
    client.request(method, params, callback or M.report_error(method))
  end
end

for name, method in pairs(protocol.requests) do
  M[name] = request(method)
end

--- `contextEdit` on pi/tree and pi/messages entries: what a context edit (pi 1.6) on the active
--- path did to the entry's part of the model's context (the field is absent when none did).
M.context_edit_effects = {}
for _, effect in ipairs(protocol.context_edit_effects) do
  M.context_edit_effects[effect] = effect
end

--- The server's notifications, subscribed to with require("pi.client").on(name, fn).
M.notifications = protocol.notifications

--- A callback that only reports failures: for requests whose result needs no handling.
function M.report_error(method, on_result)
  return function(err, result)
    if err then
      vim.notify(("pi: %s failed: %s"):format(method, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end
end

return M
