-- The plugin's entry point: `setup()` and the statusline component. Requiring it starts
-- nothing; the server starts with the first command that needs it.
local M = {}

--- Configures the plugin; may be called again (options merge over the defaults, not over the
--- previous call). A running server gets the new `settings` at once; its command, root and
--- environment stay until Neovim restarts it.
function M.setup(opts)
  local ok, problem = require("pi.config").apply(opts)
  if not ok then
    vim.notify("pi: setup(): " .. problem, vim.log.levels.ERROR)
    return false
  end
  if package.loaded["pi.client"] then
    require("pi.client").push_settings()
  end
  return true
end

--- The statusline component: "pi 1.2k/128k (1%)" for the current session ("%" escaped for
--- 'statusline'), "" before the server has answered.
function M.statusline()
  return require("pi.status").component()
end

return M
