-- :PiInstall — installs the pi-lsp server of the repository this plugin folder belongs to
-- (the plugin is its editors/neovim) into a private virtualenv under stdpath("data")/pi-lsp:
-- find a Python 3.11+, create the virtualenv, `pip install` the repository, check that the
-- server answers --version. Idempotent: a stamp records what was installed from which sources,
-- and an unchanged repository installs nothing (:PiInstall! reinstalls from scratch). Runs in the
-- background with progress messages; without a UI (`nvim --headless +PiInstall`) it waits.
local M = {}

local IS_WINDOWS = vim.fn.has("win32") == 1
local PYTHONS = { "python3.13", "python3.12", "python3.11", "python3", "python" }
local MINIMUM = { 3, 11 }
local STEPS = 3
local HEADLESS_TIMEOUT_MS = 30 * 60 * 1000

local function join(...)
  return table.concat({ ... }, "/")
end

--- Where the virtualenv lives: `base` (stdpath("data")/pi-lsp), `venv`, its `python` and `server`.
function M.paths()
  local base = join(vim.fn.stdpath("data"), "pi-lsp")
  local venv = join(base, "venv")
  local bin = IS_WINDOWS and join(venv, "Scripts") or join(venv, "bin")
  local exe = IS_WINDOWS and ".exe" or ""
  return {
    base = base,
    venv = venv,
    python = join(bin, "python" .. exe),
    server = join(bin, "pi-lsp" .. exe),
    stamp = join(base, "installed.json"),
  }
end

--- The repository the plugin belongs to (two folders above editors/neovim), or nil and why not.
function M.repository()
  local source = debug.getinfo(1, "S").source:gsub("^@", "")
  local plugin = vim.fs.dirname(vim.fs.dirname(vim.fs.dirname(vim.fn.fnamemodify(source, ":p"))))
  local root = vim.fs.dirname(vim.fs.dirname(plugin))
  local readable = function(...)
    return vim.fn.filereadable(join(root, ...)) == 1
  end
  if readable("pyproject.toml") and readable("pi_lsp", "__init__.py") then
    return root
  end
  return nil, ("the plugin folder %s is not editors/neovim of a pi-lsp repository"):format(plugin)
end

local function read(path)
  local file = io.open(path, "rb")
  if not file then
    return nil
  end
  local text = file:read("*a")
  file:close()
  return text
end

--- The plugin's version: the repository's pi_lsp.__version__ (nil outside a repository).
function M.plugin_version()
  local root = M.repository()
  local text = root and read(join(root, "pi_lsp", "__init__.py"))
  return text and text:match('__version__%s*=%s*["\']([^"\']+)["\']') or nil
end

-- What the install was made from: the package's sources and metadata, not the editors' files.
local function fingerprint(root)
  local files = { "pyproject.toml" }
  for name, kind in vim.fs.dir(join(root, "pi_lsp"), { depth = 20 }) do
    if kind == "file" and not name:find("__pycache__", 1, true) then
      table.insert(files, join("pi_lsp", name))
    end
  end
  table.sort(files)
  local parts = {}
  for _, name in ipairs(files) do
    -- A NUL would turn the string into a Blob on its way to sha256().
    local text = (read(join(root, name)) or ""):gsub("%z", "\\0")
    table.insert(parts, ("%s %d\n%s"):format(name, #text, text))
  end
  return vim.fn.sha256(table.concat(parts, "\n"))
end

local function read_stamp(path)
  local text = read(path)
  local ok, stamp = pcall(vim.json.decode, text or "")
  return ok and type(stamp) == "table" and stamp or nil
end

local function version_of(python)
  local ok, done = pcall(function()
    local command = { python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])" }
    return vim.system(command, { text = true }):wait(10000)
  end)
  if not ok or done.code ~= 0 then
    return nil
  end
  local major, minor, patch = vim.trim(done.stdout):match("^(%d+)%.(%d+)%.(%d+)$")
  return major and { tonumber(major), tonumber(minor), tonumber(patch) } or nil
end

local function at_least(version, minimum)
  return version[1] > minimum[1] or (version[1] == minimum[1] and version[2] >= minimum[2])
end

--- The newest Python 3.11+ on PATH (`vim.g.pi_python` first, when set); or nil and what was found.
function M.find_python()
  local seen = {}
  local names = vim.g.pi_python and { vim.g.pi_python } or PYTHONS
  for _, name in ipairs(names) do
    local path = vim.fn.exepath(name)
    if path ~= "" then
      local version = version_of(path)
      if version and at_least(version, MINIMUM) then
        return path, table.concat(version, ".")
      end
      table.insert(seen, ("%s is %s"):format(path, version and table.concat(version, ".") or "not runnable"))
    end
  end
  local found = #seen > 0 and ("found: " .. table.concat(seen, ", "))
    or ("none of " .. table.concat(names, ", ") .. " is on PATH")
  return nil, found
end

local function can_make_venvs(python)
  local done = vim.system({ python, "-c", "import venv, ensurepip" }, { text = true }):wait(10000)
  return done.code == 0
end

local function tail(text, lines)
  local all = vim.split(vim.trim(text or ""), "\n")
  return table.concat(vim.list_slice(all, math.max(1, #all - lines + 1)), "\n")
end

local Install = {}
Install.__index = Install

function Install.progress(_, step, message)
  vim.notify(("pi: :PiInstall [%d/%d] %s"):format(step, STEPS, message), vim.log.levels.INFO)
end

function Install:finish(ok, message)
  self.done, self.ok = true, ok
  vim.notify("pi: " .. message, ok and vim.log.levels.INFO or vim.log.levels.ERROR)
  if self.on_done then
    self.on_done(ok, message)
  end
end

-- Runs `command`; pip's lines go to the message area as they come (the last one stays visible).
function Install:run(command, on_success)
  local function show(_, data)
    if not data then
      return
    end
    local line = vim.trim(data):match("([^\n]*)$")
    if line ~= "" then
      vim.schedule(function()
        vim.api.nvim_echo({ { "pi: " .. line:sub(1, vim.o.columns - 10) } }, false, {})
      end)
    end
  end
  vim.system(command, { text = true, stdout = show, stderr = function(_, data)
    self.errors = (self.errors or "") .. (data or "")
  end }, function(done)
    vim.schedule(function()
      if done.code == 0 then
        on_success()
      else
        local failed = ":PiInstall failed: %s exited with %d:\n%s"
        self:finish(false, failed:format(table.concat(command, " "), done.code, tail(self.errors, 12)))
      end
    end)
  end)
end

function Install:start()
  local paths, root, python = self.paths, self.root, self.python
  local started = vim.uv.hrtime()
  local function seconds()
    return ("%.0f s"):format((vim.uv.hrtime() - started) / 1e9)
  end
  local function verify()
    local done = vim.system({ paths.server, "--version" }, { text = true }):wait(30000)
    local version = done.code == 0 and vim.trim(done.stdout):match("^pi%-lsp (%S+)")
    if not version then
      return self:finish(false, (":PiInstall: %s --version failed:\n%s"):format(paths.server, tail(done.stderr, 12)))
    end
    local stamp = { version = version, fingerprint = self.fingerprint, repository = root, python = python }
    vim.fn.writefile({ vim.json.encode(stamp) }, paths.stamp)
    local installed = "pi-lsp %s installed in %s (%s); setup()'s default cmd uses it"
    self:finish(true, installed:format(version, paths.venv, seconds()))
  end
  local function install()
    self:progress(2, ("installing pi-lsp and its dependencies from %s"):format(root))
    self:run({ paths.python, "-m", "pip", "install", "--disable-pip-version-check", "--upgrade", root }, function()
      self:progress(3, "checking the server")
      verify()
    end)
  end
  vim.fn.mkdir(paths.base, "p")
  vim.fn.delete(paths.stamp)
  if self.force or vim.fn.executable(paths.python) ~= 1 then
    vim.fn.delete(paths.venv, "rf")
    local creating = "creating a virtualenv with %s (Python %s) in %s"
    self:progress(1, creating:format(python, self.python_version, paths.venv))
    self:run({ python, "-m", "venv", paths.venv }, install)
  else
    self:progress(1, "the virtualenv exists: " .. paths.venv)
    install()
  end
end

--- Installs (or, with `force`, reinstalls) the server. `on_done(ok, message)` runs at the end.
--- Returns the install, whose `done` and `ok` fields tell how it went.
function M.install(opts)
  opts = opts or {}
  local self = setmetatable({ paths = M.paths(), force = opts.force, on_done = opts.on_done }, Install)
  local root, problem = M.repository()
  if not root then
    self:finish(false, ":PiInstall: " .. problem .. "; install the server with pip instead (see :help pi-install)")
    return self
  end
  self.root, self.fingerprint = root, fingerprint(root)
  local stamp = read_stamp(self.paths.stamp)
  local current = stamp and stamp.fingerprint == self.fingerprint and vim.fn.executable(self.paths.server) == 1
  if current and not self.force then
    local already = "pi-lsp %s is already installed in %s (:PiInstall! reinstalls it)"
    self:finish(true, already:format(stamp.version, self.paths.venv))
    return self
  end
  local python, found = M.find_python()
  if not python then
    local needs = ":PiInstall needs Python 3.11 or newer (%s). Install one (python.org, or your system's "
      .. "package manager) or name it with vim.g.pi_python"
    self:finish(false, needs:format(found))
    return self
  end
  if not can_make_venvs(python) then
    local no_venv = ":PiInstall: %s cannot create a virtualenv (its venv or ensurepip module is missing). "
      .. "On Debian or Ubuntu: sudo apt install python3-venv"
    self:finish(false, no_venv:format(python))
    return self
  end
  self.python, self.python_version = python, table.concat(version_of(python), ".")
  self:start()
  return self
end

--- :PiInstall[!]: in the background, or waiting for the end when Neovim has no UI.
function M.command(force)
  local install = M.install({ force = force })
  if #vim.api.nvim_list_uis() == 0 then
    vim.wait(HEADLESS_TIMEOUT_MS, function()
      return install.done
    end, 50)
  end
  return install
end

return M
