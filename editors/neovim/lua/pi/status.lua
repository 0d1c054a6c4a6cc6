-- The statusline component: the current session's context usage, refreshed after each turn and
-- tree change (never by polling), plus whether a turn or a compaction runs.
local util = require("pi.util")

local M = { state = nil, activity = nil }

local function redraw()
  pcall(vim.cmd.redrawstatus, { bang = true })
end

--- Asks the server for pi/state; only when a client runs (the statusline must not start one).
function M.refresh()
  if not require("pi.client").get() then
    return
  end
  require("pi.api").state({}, function(err, result)
    if not err then
      M.state = result
      redraw()
    end
  end)
end

function M.set_activity(activity)
  M.activity = activity
  redraw()
end

--- ", compacts at 84%": where automatic compaction starts; empty when it is off.
function M.compaction_mark(usage)
  if not util.present(usage.compactAt) or not util.present(usage.contextWindow) or usage.contextWindow <= 0 then
    return ""
  end
  return (", compacts at %d%%%%"):format(math.floor(usage.compactAt / usage.contextWindow * 100 + 0.5))
end

local function usage_text(usage)
  if not util.present(usage) then
    return "no model"
  end
  local window = util.short_number(usage.contextWindow)
  if not util.present(usage.tokens) then
    return ("?/%s"):format(window)
  end
  local percent = util.present(usage.percent) and ("%d%%%%"):format(math.floor(usage.percent + 0.5)) or "?"
  return ("%s/%s (%s%s)"):format(util.short_number(usage.tokens), window, percent, M.compaction_mark(usage))
end

--- "pi 1.2k/128k (1%, compacts at 87%)", "pi [running] …"; empty before the server answered once.
function M.component()
  if not M.state then
    return ""
  end
  local activity = M.activity and ("[" .. M.activity .. "] ") or ""
  return "pi " .. activity .. usage_text(M.state.contextUsage)
end

return M
