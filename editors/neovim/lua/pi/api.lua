-- One function per pi/* request of the server (mirrors pi_lsp/protocol.py; a unit test fails when
-- they drift apart). Each takes the params table (camelCase keys, as on the wire) and a callback
-- `callback(err, result)`; `err` is the JSON-RPC error `{code, message}` or nil.
--
-- The result and event shapes below are LuaCATS annotations of protocol.py's classes (same names);
-- the same test checks them. A field marked `?` may be nil: the server sends null for it (Neovim
-- decodes null inside objects as nil) or leaves it out.
local client = require("pi.client")

---@class pi.AbortResult
---@field sessionId string
---@field aborted boolean

---@class pi.CompactResult
---@field sessionId string
---@field entryId string
---@field summary string
---@field firstKeptEntryId string
---@field tokensBefore integer
---@field readFiles string[]
---@field modifiedFiles string[]
---@field reason string

---@class pi.ContextUsage
---@field tokens? integer
---@field contextWindow integer
---@field percent? number
---@field compactAt? integer

---@class pi.FileChangesResult
---@field sessionId string
---@field fromId? string
---@field toId? string
---@field files pi.FilePreview[]

---@class pi.FileOutcome
---@field path string
---@field action string restored|created|deleted|conflict|skipped
---@field reason? string

---@class pi.FilePreview
---@field path string
---@field action string
---@field diff string
---@field reason? string
---@field commands? string[]
---@field targetText? string

---@class pi.ForkResult
---@field sessionId string
---@field path? string
---@field leafId? string
---@field parentSessionId string
---@field files? pi.FileOutcome[]

---@class pi.LabelResult
---@field entryId string
---@field leafId? string

---@class pi.ContextPart
---@field kind string base, systemFile, appendSystem, contextFile, skills, environment, extension, tools, compactionSummary, branchSummary, nestedContextFile, message or usageDifference
---@field label string
---@field tokens integer
---@field entryId? string
---@field role? string
---@field preview? string
---@field path? string
---@field contextEdit? string

---@class pi.ContextResult
---@field sessionId string
---@field total integer
---@field basis string "usage" or "estimate"
---@field contextWindow integer
---@field compactAt? integer
---@field freeToWindow integer
---@field freeToCompaction? integer
---@field parts pi.ContextPart[]

---@class pi.ContextEditResult
---@field sessionId string
---@field entryId string the context_edit entry written (the new leaf)
---@field leafId? string
---@field contextEdit? string what applies to the target now: "removed" or "replaced" (nil after a restore)

---@class pi.MessagesResult
---@field sessionId string
---@field leafId? string
---@field total integer
---@field offset integer
---@field entries pi.TranscriptEntry[]

---@class pi.LoginResult
---@field provider string
---@field path string

---@class pi.LogoutResult
---@field provider string
---@field removed boolean
---@field path string

---@class pi.ModelInfo
---@field model string
---@field provider string
---@field modelId string
---@field name? string
---@field contextWindow? integer
---@field available boolean
---@field keySource? string
---@field source string

---@class pi.ModelRef
---@field model string
---@field provider string
---@field modelId string
---@field keyStatus string
---@field keySource? string
---@field source string

---@class pi.ModelsResult
---@field models pi.ModelInfo[]
---@field providers pi.ProviderInfo[]

---@class pi.NameResult
---@field entryId string
---@field name? string

---@class pi.NavigateResult
---@field leafId? string
---@field summaryEntryId? string
---@field editorText? string
---@field files? pi.FileOutcome[]

---@class pi.NewSessionResult
---@field sessionId string
---@field path? string

---@class pi.OpenSessionResult
---@field sessionId string
---@field path? string
---@field leafId? string
---@field readOnly boolean
---@field readOnlyReason? string

---@class pi.ProviderInfo
---@field provider string
---@field keySource? string
---@field keyVariable? string
---@field subscription boolean
---@field local boolean

---@class pi.PromptResult
---@field sessionId string
---@field leafId? string
---@field stopReason string
---@field errorMessage? string
---@field usage? table
---@field contextTokens? integer
---@field contextWindow integer

---@class pi.ResourceChange
---@field kind string
---@field name string
---@field path string

---@class pi.ResourceDiagnostic
---@field path string
---@field line integer
---@field message string
---@field severity string

---@class pi.ResourcesChanged
---@field added pi.ResourceChange[]
---@field changed pi.ResourceChange[]
---@field removed pi.ResourceChange[]

---@class pi.NestedContextFile
---@field path string
---@field entryId string
---@field current boolean

---@class pi.ResourcesResult
---@field contextFiles string[]
---@field systemPrompt? string
---@field appendSystemPrompt? string
---@field skills pi.Skill[]
---@field templates pi.Template[]
---@field diagnostics pi.ResourceDiagnostic[]
---@field nestedContextFiles pi.NestedContextFile[]

---@class pi.SessionInfo
---@field path string
---@field id string
---@field cwd string
---@field name? string
---@field parentSessionPath? string
---@field created? string
---@field modified string
---@field messageCount integer
---@field firstMessage string

---@class pi.SessionsResult
---@field currentSessionId string
---@field sessions pi.SessionInfo[]

---@class pi.SetModelResult
---@field sessionId string
---@field model string
---@field provider string
---@field modelId string

---@class pi.SetThinkingLevelResult
---@field sessionId string
---@field thinkingLevel string

---@class pi.Skill
---@field name string
---@field description string
---@field path string
---@field source string
---@field disableModelInvocation boolean

---@class pi.SessionCost
---@field total number
---@field input integer
---@field output integer
---@field cacheRead integer
---@field cacheWrite integer
---@field cachedPercent? number

---@class pi.StateResult
---@field sessionId string
---@field path? string
---@field name? string
---@field leafId? string
---@field model? pi.ModelRef
---@field thinkingLevel string
---@field contextUsage? pi.ContextUsage
---@field messageCount integer
---@field isStreaming boolean
---@field isCompacting boolean
---@field readOnly boolean
---@field cost pi.SessionCost
---@field readOnlyReason? string

---@class pi.Template
---@field name string
---@field description string
---@field path string
---@field source string

---@class pi.SummaryCard
---@field summary string
---@field readFiles string[]
---@field modifiedFiles string[]
---@field tokensBefore? integer
---@field tokensAfter? integer the context's size right after it (live events only)
---@field model? string the model that wrote it, or "extension" (live events only)
---@field cost? number dollars, when its usage was recorded

---@class pi.TranscriptEntry
---@field entryId string
---@field type string
---@field timestamp? string
---@field message? table
---@field summary? string
---@field customType? string
---@field content? any
---@field contextEdit? "removed"|"replaced"
---@field card? pi.SummaryCard for compaction and branch_summary entries

---@class pi.TreeEntry
---@field id string
---@field parentId? string
---@field type string
---@field preview string
---@field timestamp? string
---@field role? string
---@field label? string
---@field contextEdit? "removed"|"replaced"

---@class pi.TreeResult
---@field sessionId string
---@field leafId? string
---@field name? string
---@field labels table<string, string>
---@field activePath string[]
---@field roots string[]
---@field children table<string, string[]>
---@field entries pi.TreeEntry[]

---@class pi.TreeNodeRow
---@field id string
---@field parentId? string
---@field type string
---@field preview string
---@field timestamp? string
---@field childCount integer
---@field branchStart boolean
---@field active boolean
---@field expandable boolean
---@field role? string
---@field label? string
---@field contextEdit? "removed"|"replaced"

---@class pi.TreeLevel
---@field parentId? string
---@field total integer
---@field offset integer
---@field rows pi.TreeNodeRow[]

---@class pi.TreeWindowResult
---@field sessionId string
---@field version integer
---@field leafId? string
---@field name? string
---@field targetId? string
---@field levels pi.TreeLevel[]

---@class pi.TreeChildrenResult
---@field sessionId string
---@field version integer
---@field level pi.TreeLevel

---@class pi.TreeSearchResult
---@field sessionId string
---@field version integer
---@field total integer
---@field rows pi.TreeNodeRow[]

---@class pi.AgentStartEvent
---@field type "agent_start"

---@class pi.MessageStartEvent
---@field type "message_start"
---@field role string

---@class pi.TextDeltaEvent
---@field type "text_delta"
---@field delta string

---@class pi.ThinkingDeltaEvent
---@field type "thinking_delta"
---@field delta string

---@class pi.ToolCallStartEvent
---@field type "toolcall_start"
---@field toolCallId string
---@field name string

---@class pi.ToolExecutionStartEvent
---@field type "tool_execution_start"
---@field toolCallId string
---@field name string
---@field arguments table

---@class pi.ToolExecutionUpdateEvent
---@field type "tool_execution_update"
---@field toolCallId string
---@field name string
---@field content table[]
---@field details? table

---@class pi.ToolExecutionEndEvent
---@field type "tool_execution_end"
---@field toolCallId string
---@field name string
---@field isError boolean
---@field content table[]
---@field details? table
---@field entryId string

---@class pi.MessageEndEvent
---@field type "message_end"
---@field entryId string
---@field message table

---@class pi.RetryEvent
---@field type "retry"
---@field attempt integer
---@field maxAttempts integer
---@field delayMs integer
---@field errorMessage string

---@class pi.SummarizationRetryScheduledEvent
---@field type "summarization_retry_scheduled"
---@field attempt integer
---@field maxAttempts integer
---@field delayMs integer
---@field errorMessage string

---@class pi.SummarizationRetryAttemptStartEvent
---@field type "summarization_retry_attempt_start"
---@field source string "compaction" or "branch_summary"
---@field reason? string

---@class pi.SummarizationRetryFinishedEvent
---@field type "summarization_retry_finished"

---@class pi.AuthErrorEvent
---@field type "auth_error"
---@field provider string
---@field status integer
---@field keySource? string
---@field message string

---@class pi.CompactionStartEvent
---@field type "compaction_start"
---@field reason string

---@class pi.CompactionEndEvent
---@field type "compaction_end"
---@field reason string
---@field aborted boolean
---@field willRetry boolean
---@field entryId? string
---@field tokensBefore? integer
---@field errorMessage? string
---@field card? pi.SummaryCard

---@class pi.BranchSummaryStartEvent
---@field type "branch_summary_start"
---@field targetId string

---@class pi.BranchSummaryEndEvent
---@field type "branch_summary_end"
---@field targetId string
---@field aborted boolean
---@field entryId? string
---@field errorMessage? string
---@field card? pi.SummaryCard

---@class pi.TreeChangedEvent
---@field type "tree_changed"
---@field leafId? string
---@field version integer
---@field entries pi.TreeNodeRow[]
---@field labels table<string, string|vim.NIL> labels set by the change (vim.NIL: cleared)
---@field name? string
---@field contextEdits table<string, string|vim.NIL> contextEdit marks the change's context edits changed (vim.NIL: none applies now)

---@class pi.AgentEndEvent
---@field type "agent_end"
---@field stopReason string
---@field leafId? string

---@class pi.ErrorEvent
---@field type "error"
---@field message string

---@alias pi.Event
---| pi.AgentStartEvent
---| pi.MessageStartEvent
---| pi.TextDeltaEvent
---| pi.ThinkingDeltaEvent
---| pi.ToolCallStartEvent
---| pi.ToolExecutionStartEvent
---| pi.ToolExecutionUpdateEvent
---| pi.ToolExecutionEndEvent
---| pi.MessageEndEvent
---| pi.RetryEvent
---| pi.SummarizationRetryScheduledEvent
---| pi.SummarizationRetryAttemptStartEvent
---| pi.SummarizationRetryFinishedEvent
---| pi.AuthErrorEvent
---| pi.CompactionStartEvent
---| pi.CompactionEndEvent
---| pi.BranchSummaryStartEvent
---| pi.BranchSummaryEndEvent
---| pi.TreeChangedEvent
---| pi.AgentEndEvent
---| pi.ErrorEvent

---@class pi.EventNotification
---@field sessionId string
---@field seq integer
---@field event pi.Event

local M = {}

---@alias pi.Error { code: integer, message: string }
---@alias pi.Request<R> fun(params: table?, callback: (fun(err: pi.Error?, result: R?))?)

local function request(method)
  return function(params, callback)
    -- An empty Lua table would be sent as a JSON array; the server wants an object.
    if params == nil or vim.tbl_isempty(params) then
      params = vim.empty_dict()
    end
    client.request(method, params, callback or M.report_error(method))
  end
end

---@type pi.Request<pi.PromptResult>
M.prompt = request("pi/prompt")
---@type pi.Request<pi.AbortResult>
M.abort = request("pi/abort")
---@type pi.Request<pi.TreeResult>
M.tree = request("pi/tree")
---@type pi.Request<pi.TreeWindowResult>
M.tree_window = request("pi/treeWindow")
---@type pi.Request<pi.TreeChildrenResult>
M.tree_children = request("pi/treeChildren")
---@type pi.Request<pi.TreeSearchResult>
M.tree_search = request("pi/treeSearch")
---@type pi.Request<pi.MessagesResult>
M.messages = request("pi/messages")
---@type pi.Request<pi.NavigateResult>
M.navigate = request("pi/navigate")
---@type pi.Request<pi.FileChangesResult>
M.file_changes = request("pi/fileChanges")
---@type pi.Request<pi.SessionsResult>
M.sessions = request("pi/sessions")
---@type pi.Request<pi.NewSessionResult>
M.new_session = request("pi/newSession")
---@type pi.Request<pi.OpenSessionResult>
M.open_session = request("pi/openSession")
--- Params: `entryId?` (left out: the leaf when the server handles it), `sessionId?`,
--- `restoreFiles?`, `force?`.
---@type pi.Request<pi.ForkResult>
M.fork = request("pi/fork")
---@type pi.Request<pi.LabelResult>
M.label = request("pi/label")
---@type pi.Request<pi.ContextResult>
M.context = request("pi/context")
--- Params: `targetId`, `replacement` (a string, or vim.NIL to leave the target out), `sessionId?`.
---@type pi.Request<pi.ContextEditResult>
M.context_edit = request("pi/contextEdit")
--- Params: `targetId`, `sessionId?`.
---@type pi.Request<pi.ContextEditResult>
M.context_restore = request("pi/contextRestore")
---@type pi.Request<pi.NameResult>
M.name = request("pi/name")
---@type pi.Request<pi.StateResult>
M.state = request("pi/state")
---@type pi.Request<pi.ModelsResult>
M.models = request("pi/models")
---@type pi.Request<pi.SetModelResult>
M.set_model = request("pi/setModel")
---@type pi.Request<pi.SetThinkingLevelResult>
M.set_thinking_level = request("pi/setThinkingLevel")
---@type pi.Request<pi.CompactResult>
M.compact = request("pi/compact")
---@type pi.Request<pi.ResourcesResult>
M.resources = request("pi/resources")
---@type pi.Request<pi.ResourcesChanged>
M.reload = request("pi/reload")
---@type pi.Request<pi.LoginResult>
M.login = request("pi/login")
---@type pi.Request<pi.LogoutResult>
M.logout = request("pi/logout")

--- `contextEdit` on pi/tree and pi/messages entries: what a context edit (pi 1.6) on the active
--- path did to the entry's part of the model's context (the field is absent when none did).
M.context_edit_effects = {
  removed = "removed",
  replaced = "replaced",
}

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
