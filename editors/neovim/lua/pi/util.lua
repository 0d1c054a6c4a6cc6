-- Small helpers shared by the modules: scratch buffers, JSON nulls, message text, short numbers.
local M = {}

--- A scratch buffer of the plugin's (chat, prompt, tree, context): named, hidden when its window
--- closes, no swap file.
function M.scratch_buffer(name, filetype, modifiable)
  local buffer = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buffer, name)
  vim.bo[buffer].bufhidden = "hide"
  vim.bo[buffer].swapfile = false
  vim.bo[buffer].modifiable = modifiable
  vim.bo[buffer].filetype = filetype
  return buffer
end

--- False for nil and for JSON null (which arrives as vim.NIL inside lists).
function M.present(value)
  return value ~= nil and value ~= vim.NIL
end

--- The text of an AgentMessage-like content: a string, or the text blocks of a block list.
function M.content_text(content)
  if type(content) == "string" then
    return content
  end
  local parts = {}
  for _, block in ipairs(type(content) == "table" and content or {}) do
    if type(block) == "table" and block.type == "text" and type(block.text) == "string" then
      table.insert(parts, block.text)
    end
  end
  return table.concat(parts, "\n")
end

--- 1234 → "1.2k", 128000 → "128k".
function M.short_number(value)
  if not M.present(value) then
    return "?"
  end
  if value >= 1000 then
    local text = ("%.1fk"):format(value / 1000)
    return (text:gsub("%.0k$", "k"))
  end
  return tostring(value)
end

--- A window size from an option: a count, or below 1 a fraction of `total`.
function M.window_size(total, wanted)
  return wanted < 1 and math.floor(total * wanted) or wanted
end

--- The window of the current tab page showing `buffer`, if any.
function M.window_showing(buffer)
  for _, window in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.api.nvim_win_get_buf(window) == buffer then
      return window
    end
  end
end

function M.error(message)
  vim.notify("pi: " .. message, vim.log.levels.ERROR)
end

return M
