-- Going back with the files (`r` in the tree, `:PiNavigate {id} files`): the file changes the
-- move would make (pi/fileChanges) are shown as unified diffs in a scratch buffer, confirmed with
-- vim.ui.select — files changed since pi-lsp last wrote them (conflicts) are kept unless the user
-- explicitly chooses to overwrite them in a second choice — then pi/navigate with restoreFiles.
-- The server's edit arrives through workspace/applyEdit (buffers updated, `u` undoes it); the
-- buffers it touched are then saved so the files on disk match.
local util = require("pi.util")

local M = {}

local NAME = "pi://files"
local WRITES = { restored = true, created = true, deleted = true }
local UNTRACKED = "Changes made by shell commands are not tracked: restoring does not undo them."

local buffer = nil

local function relative(path)
  return vim.fn.fnamemodify(path, ":~:.")
end

local function count(files, wanted)
  local found = {}
  for _, file in ipairs(files) do
    if wanted[file.action] then
      table.insert(found, file)
    end
  end
  return found
end

--- The preview's lines: a summary per file, then the diffs (pure, for tests).
---@param preview pi.FileChangesResult
function M.lines(preview)
  local lines = {
    ("pi: the files at entry %s"):format(tostring(preview.toId)),
    UNTRACKED,
    "",
  }
  if #preview.files == 0 then
    table.insert(lines, "No file the agent changed differs between here and there.")
  end
  for _, file in ipairs(preview.files) do
    local reason = util.present(file.reason) and ("  (" .. file.reason .. ")") or ""
    table.insert(lines, ("%-9s %s%s"):format(file.action, relative(file.path), reason))
    for _, command in ipairs(util.present(file.commands) and file.commands or {}) do
      table.insert(lines, ("          ! a command on the way names it: %s"):format(command))
    end
  end
  for _, file in ipairs(preview.files) do
    if file.diff ~= "" then
      table.insert(lines, "")
      vim.list_extend(lines, vim.split(file.diff, "\n", { trimempty = true }))
    end
  end
  return lines
end

--- The preview buffer, if shown.
function M.preview_buffer()
  return buffer ~= nil and vim.api.nvim_buf_is_valid(buffer) and buffer or nil
end

local function close()
  if M.preview_buffer() then
    vim.api.nvim_buf_delete(buffer, { force = true })
  end
  buffer = nil
end

local function show(preview)
  close()
  buffer = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(buffer, NAME)
  vim.bo[buffer].bufhidden = "wipe"
  vim.bo[buffer].swapfile = false
  vim.api.nvim_buf_set_lines(buffer, 0, -1, false, M.lines(preview))
  vim.bo[buffer].modifiable = false
  vim.bo[buffer].filetype = "diff"
  local previous = vim.api.nvim_get_current_win()
  vim.cmd("botright split")
  vim.api.nvim_win_set_buf(0, buffer)
  vim.keymap.set("n", "q", close, { buffer = buffer, nowait = true, desc = "pi: close the preview" })
  vim.api.nvim_set_current_win(previous)
end

-- The buffers the restore changed are saved, so the files on disk are the restored ones. `write!`:
-- a buffer opened on a missing file refuses to overwrite the file the edit has just created.
local function save(files)
  for _, file in ipairs(files) do
    local loaded = vim.fn.bufnr(file.path)
    if (file.action == "restored" or file.action == "created") and loaded ~= -1
      and vim.api.nvim_buf_is_loaded(loaded) and vim.bo[loaded].modified then
      vim.api.nvim_buf_call(loaded, function()
        vim.cmd("silent keepalt write!")
      end)
    end
  end
end

local function summary(files)
  local counts, left = {}, {}
  for _, file in ipairs(files) do
    counts[file.action] = (counts[file.action] or 0) + 1
    if not WRITES[file.action] and file.reason ~= "already as it was there" then
      table.insert(left, ("%s (%s)"):format(relative(file.path), file.reason or file.action))
    end
  end
  local parts = {}
  for _, action in ipairs({ "restored", "created", "deleted", "conflict", "skipped" }) do
    if counts[action] then
      table.insert(parts, ("%d %s"):format(counts[action], action))
    end
  end
  local text = #parts > 0 and table.concat(parts, ", ") or "no file changed"
  return #left > 0 and (text .. "; left as they are: " .. table.concat(left, ", ")) or text
end

local function apply(id, force, options)
  local params = {
    targetId = id,
    restoreFiles = true,
    force = force or nil,
    summarize = options.summarize or nil,
    instructions = options.instructions,
  }
  require("pi.api").navigate(params, function(err, result)
    close()
    if err then
      return util.error(("going back with the files failed: %s"):format(err.message or vim.inspect(err)))
    end
    save(result.files or {})
    local text = "files: " .. summary(result.files or {})
    require("pi.chat").notice(text)
    vim.notify("pi: " .. text, vim.log.levels.INFO)
    if options.on_navigated then
      options.on_navigated(result)
    end
  end)
end

local function confirm_conflicts(id, conflicts, options)
  local names = vim.tbl_map(function(file)
    return relative(file.path)
  end, conflicts)
  local prompt = ("%d file(s) changed since pi-lsp last wrote them: %s"):format(#conflicts, table.concat(names, ", "))
  vim.ui.select({ "Keep them as they are", "Overwrite them" }, { prompt = prompt }, function(_, choice)
    if not choice then
      return close()
    end
    apply(id, choice == 2, options)
  end)
end

--- Previews the files at entry `id`, asks, and navigates there with them.
--- `options`: summarize, instructions (as for pi/navigate), on_navigated(result).
function M.go_back(id, options)
  options = options or {}
  require("pi.api").file_changes({ toId = id }, require("pi.api").report_error("pi/fileChanges", function(preview)
    show(preview)
    local writes = count(preview.files, WRITES)
    local conflicts = count(preview.files, { conflict = true })
    local prompt = ("Go back to %s: restore %d file(s)%s?"):format(
      id,
      #writes,
      #conflicts > 0 and (", %d changed since (asked next)"):format(#conflicts) or ""
    )
    vim.ui.select({ "Go back with the files", "Cancel" }, { prompt = prompt }, function(_, choice)
      if choice ~= 1 then
        return close()
      end
      if #conflicts > 0 then
        return confirm_conflicts(id, conflicts, options)
      end
      apply(id, false, options)
    end)
  end))
end

return M
