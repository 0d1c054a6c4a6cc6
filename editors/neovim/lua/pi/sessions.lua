-- Every session of the workspace: :PiSearch (pi/searchSessions, pi's own sessions included) into
-- telescope, fzf-lua or the location list, where choosing a hit (<CR>) opens its session in the
-- chat and the tree at that entry, and
-- the actions of :PiSessions on a picked session (open, rename, export, delete to the trash).
local api = require("pi.api")
local util = require("pi.util")

local M = {}

local SEARCH_LIMIT = 100

--- The hits of the last search, in location-list order.
M.hits = {}

local function one_line(text)
  return (tostring(text or ""):gsub("%s+", " "))
end

local function hit_text(hit)
  local session = util.present(hit.sessionName) and hit.sessionName or hit.sessionId:sub(1, 8)
  local when = util.present(hit.timestamp) and hit.timestamp:sub(1, 16):gsub("T", " ") or "?"
  local branch = hit.onActivePath and "" or " (other branch)"
  return ("%s  %s  %s%s: %s"):format(when, session, hit.role or hit.type or "entry", branch, one_line(hit.preview))
end

--- Opens the session of `hit` (by path: pi's own directory too) with the tree at its entry.
function M.open(hit)
  require("pi.actions").open_session({ path = hit.path }, hit.entryId)
end

local function open_under_cursor()
  local list = vim.fn.getloclist(0, { context = 1, idx = 0 })
  if type(list.context) ~= "table" or not list.context.pi_search then
    return vim.cmd('execute "normal! \\<CR>"') -- another location list: its usual <CR>
  end
  local hit = M.hits[vim.fn.line(".")]
  if hit then
    vim.cmd("wincmd p")
    M.open(hit)
  end
end

local function picker()
  local chosen = require("pi.config").options.search_picker
  if chosen == "auto" then
    if pcall(require, "telescope") then
      return "telescope"
    end
    return pcall(require, "fzf-lua") and "fzf-lua" or "loclist"
  end
  return chosen
end

local function show_in_telescope(hits, title)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local sorters = require("telescope.config").values
  local actions = require("telescope.actions")
  local action_state = require("telescope.actions.state")
  pickers
    .new({}, {
      prompt_title = title,
      finder = finders.new_table({
        results = hits,
        entry_maker = function(hit)
          local text = hit_text(hit)
          return { value = hit, display = text, ordinal = text }
        end,
      }),
      sorter = sorters.generic_sorter({}),
      attach_mappings = function(prompt_buffer)
        actions.select_default:replace(function()
          local selection = action_state.get_selected_entry()
          actions.close(prompt_buffer)
          if selection then
            M.open(selection.value)
          end
        end)
        return true
      end,
    })
    :find()
end

local function show_in_fzf(hits, title)
  local lines = {}
  for index, hit in ipairs(hits) do
    lines[index] = ("%d\t%s"):format(index, hit_text(hit))
  end
  require("fzf-lua").fzf_exec(lines, {
    prompt = title .. "> ",
    fzf_opts = { ["--delimiter"] = "\t", ["--with-nth"] = "2.." },
    actions = {
      default = function(selected)
        local index = selected and selected[1] and tonumber(selected[1]:match("^(%d+)"))
        if index and hits[index] then
          M.open(hits[index])
        end
      end,
    },
  })
end

local function show_in_loclist(hits, title)
  local items = {}
  for index, hit in ipairs(hits) do
    items[index] = { text = hit_text(hit), valid = 1 }
  end
  vim.fn.setloclist(0, {}, " ", { title = title, items = items, context = { pi_search = true } })
  vim.cmd("lopen")
  vim.keymap.set("n", "<CR>", open_under_cursor, { buffer = 0, desc = "pi: open the session at this entry" })
end

--- Searches every session of the workspace for `query`: the hits in telescope, fzf-lua or the
--- location list (the `search_picker` option), each opening its session at its entry.
function M.search(query)
  local function run(text)
    if not text or vim.trim(text) == "" then
      return
    end
    api.search_sessions({ query = text, limit = SEARCH_LIMIT }, api.report_error("pi/searchSessions", function(result)
      if #result.hits == 0 then
        local note = result.indexing.complete and "" or " (still indexing the sessions)"
        return vim.notify(("pi: no session holds %q%s"):format(text, note), vim.log.levels.INFO)
      end
      M.hits = result.hits
      local total = tostring(result.total) .. (result.totalCapped and "+" or "")
      local title = ("pi: %s match%s for %q"):format(total, result.total == 1 and "" or "es", text)
      local show = ({ telescope = show_in_telescope, ["fzf-lua"] = show_in_fzf })[picker()] or show_in_loclist
      show(result.hits, title)
    end))
  end
  if query and query ~= "" then
    return run(query)
  end
  vim.ui.input({ prompt = "Search the sessions: " }, run)
end

local FORMATS = { "html", "markdown", "jsonl" }

local function rename(session)
  vim.ui.input({ prompt = "Session name: ", default = session.name or "" }, function(name)
    if name and vim.trim(name) ~= "" then
      api.name({ sessionId = session.id, name = vim.trim(name) }, api.report_error("pi/name", function()
        vim.notify("pi: renamed to " .. vim.trim(name), vim.log.levels.INFO)
        require("pi.status").refresh()
      end))
    end
  end)
end

local function export(session)
  vim.ui.select(FORMATS, { prompt = "Export as" }, function(format)
    if format then
      local params = { sessionId = session.id, format = format }
      api.export_session(params, api.report_error("pi/exportSession", function(result)
        vim.notify("pi: exported to " .. result.path, vim.log.levels.INFO)
      end))
    end
  end)
end

local function delete(session)
  local title = util.present(session.name) and session.name or one_line(session.firstMessage)
  local answer = vim.fn.confirm(("Move the session %q to the trash?"):format(title), "&Yes\n&No", 2)
  if answer == 1 then
    api.delete_session({ sessionId = session.id }, api.report_error("pi/deleteSession", function(result)
      vim.notify("pi: moved to the trash: " .. result.path, vim.log.levels.INFO)
    end))
  end
end

M.ACTIONS = { "open", "rename", "export", "delete" }

--- Runs `action` (one of M.ACTIONS) on the picked `session` (a pi/sessions item).
function M.act(action, session)
  if action == "rename" then
    return rename(session)
  elseif action == "export" then
    return export(session)
  elseif action == "delete" then
    return delete(session)
  end
  require("pi.actions").open_session({ sessionId = session.id })
end

return M
