-- Attaches the project's file buffers to the client: the agent then reads their unsaved text,
-- and its edits arrive through workspace/applyEdit as buffer changes that `u` undoes.
local M = {}

local GROUP = "pi_attach"

local function attachable(buffer, root)
  local name = vim.api.nvim_buf_get_name(buffer)
  return vim.api.nvim_buf_is_loaded(buffer)
    and vim.bo[buffer].buftype == ""
    and name ~= ""
    and vim.startswith(vim.fs.normalize(name), vim.fs.normalize(root) .. "/")
end

local function attach_one(buffer, client_id, root)
  if attachable(buffer, root) then
    vim.lsp.buf_attach_client(buffer, client_id)
  end
end

--- Attaches the loaded buffers under `root`, and every one read or created from now on.
function M.attach(client_id, root)
  for _, buffer in ipairs(vim.api.nvim_list_bufs()) do
    attach_one(buffer, client_id, root)
  end
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile" }, {
    group = vim.api.nvim_create_augroup(GROUP, { clear = true }),
    callback = function(args)
      if vim.lsp.get_client_by_id(client_id) then
        attach_one(args.buf, client_id, root)
      end
    end,
  })
end

--- Stops attaching new buffers (the client is gone).
function M.detach()
  pcall(vim.api.nvim_del_augroup_by_name, GROUP)
end

return M
