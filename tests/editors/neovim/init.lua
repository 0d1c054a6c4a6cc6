-- The tests' init file: this repository's plugin and nothing of the user's, plus a record of
-- every pi/event (through the plugin's `User PiEvent` autocommand) for the tests to wait on.
vim.opt.shadafile = "NONE"
vim.opt.swapfile = false
vim.opt.more = false
vim.opt.runtimepath:prepend(vim.env.PI_NVIM_PLUGIN_DIR)

_G.pi_test = { events = {}, notes = {} }

-- Every message the plugin shows, recorded on its way to the real vim.notify.
local notify = vim.notify
vim.notify = function(message, level, opts)
  table.insert(_G.pi_test.notes, { message = message, level = level or vim.log.levels.INFO })
  return notify(message, level, opts)
end

--- The recorded messages of `level` or above.
function _G.pi_test.notes_from(level)
  return vim.tbl_filter(function(note)
    return note.level >= level
  end, _G.pi_test.notes)
end

vim.api.nvim_create_autocmd("User", {
  pattern = "PiEvent",
  callback = function(args)
    table.insert(_G.pi_test.events, args.data.event)
  end,
})

--- The number of recorded events of `type`.
function _G.pi_test.count(type)
  local count = 0
  for _, event in ipairs(_G.pi_test.events) do
    if event.type == type then
      count = count + 1
    end
  end
  return count
end

--- Waits until `count` events of `type` arrived; returns whether they did.
function _G.pi_test.wait_for(type, count, timeout_ms)
  return vim.wait(timeout_ms or 15000, function()
    return _G.pi_test.count(type) >= (count or 1)
  end, 20)
end

function _G.pi_test.lines(buffer)
  return vim.api.nvim_buf_get_lines(buffer, 0, -1, false)
end

function _G.pi_test.chat_lines()
  return _G.pi_test.lines(require("pi.chat").chat_buffer())
end

--- Waits until a line of the chat contains `text` (a plain string); returns the lines.
function _G.pi_test.wait_for_chat(text, timeout_ms)
  vim.wait(timeout_ms or 15000, function()
    return table.concat(_G.pi_test.chat_lines(), "\n"):find(text, 1, true) ~= nil
  end, 20)
  return _G.pi_test.chat_lines()
end
