-- One function per pi/* request of the server (mirrors pi_lsp/protocol.py; a unit test fails when
-- they drift apart). Each takes the params table (camelCase keys, as on the wire) and a callback
-- `callback(err, result)`; `err` is the JSON-RPC error `{code, message}` or nil.
local client = require("pi.client")

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

M.prompt = request("pi/prompt")
M.abort = request("pi/abort")
M.tree = request("pi/tree")
M.messages = request("pi/messages")
M.navigate = request("pi/navigate")
M.sessions = request("pi/sessions")
M.new_session = request("pi/newSession")
M.open_session = request("pi/openSession")
M.fork = request("pi/fork")
M.label = request("pi/label")
M.name = request("pi/name")
M.state = request("pi/state")
M.models = request("pi/models")
M.set_model = request("pi/setModel")
M.set_thinking_level = request("pi/setThinkingLevel")
M.compact = request("pi/compact")
M.resources = request("pi/resources")
M.reload = request("pi/reload")

--- The server's notifications, subscribed to with require("pi.client").on(name, fn).
M.notifications = {
  event = "pi/event",
  resources_changed = "pi/resourcesChanged",
}

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
