--- mnemo for Neovim: the memory of AI coding agents as an editable buffer.
--- This module is the plugin's core: options (`vim.g.mnemo`), the server
--- settings, which buffers attach (`root_dir`), the workspace commands act on,
--- and the mnemo client and its requests. The memory buffer is
--- `mnemo.memory`, code-action commands `mnemo.actions`, code lens and inlay
--- hints `mnemo.display`, `:Mnemo` `mnemo.commands`.
local M = {}

--- Options from `vim.g.mnemo` (all optional): `binary`, `store_path`,
--- `model_dir`, `debounce_ms`, `code_lens`, `inlay_hints`.
function M.options()
  return vim.g.mnemo or {}
end

function M.binary()
  return M.options().binary or 'mnemo'
end

--- Run the CLI on the workspace and the store the server uses (`store_path`,
--- `model_dir`); the finished `vim.system` result.
function M.run_cli(args)
  local o = M.options()
  local env = { MNEMO_STORE = o.store_path, MNEMO_MODEL_DIR = o.model_dir }
  local argv = vim.list_extend({ M.binary(), '--workspace', M.workspace() }, args)
  return vim.system(argv, { cwd = M.workspace(), env = env, text = true }):wait()
end

--- The server settings (initializationOptions) from `vim.g.mnemo`: always a
--- JSON object, `{}` when nothing is set (an empty Lua table would be sent
--- as the array `[]`).
function M.settings()
  local o = M.options()
  local settings = vim.empty_dict()
  settings.storePath = o.store_path
  settings.modelDir = o.model_dir
  settings.debounceMs = o.debounce_ms
  return settings
end

--- What marks a workspace root (`vim.fs.root` markers, searched in this
--- order: `.mnemo` first, so a mirror kept in a subfolder such as
--- docs/MEMORY.md belongs to the workspace that configures it). `root_dir`
--- below decides which buffers attach, so lsp/mnemo.lua sets no `root_markers`.
M.markers = { '.mnemo', 'MEMORY.md', '.git' }
local markers = M.markers

--- A path percent-encoded as the server spells `memory:` URIs: everything
--- but unreserved characters, sub-delims, `:`, `@` and `/`, in upper-case hex.
local function encode_path(path)
  return (path:gsub("[^A-Za-z0-9%-._~!$&'()*+,;=:@/]", function(c)
    return ('%%%02X'):format(c:byte())
  end))
end

--- The memory document of a workspace: `memory:///<path>/MEMORY.md`, the
--- path percent-encoded. It is both the buffer's name and its URI, spelled
--- as the server spells it, so diagnostics and refreshes find the buffer.
function M.memory_name(root)
  return 'memory://' .. encode_path(root) .. '/MEMORY.md'
end

--- The canonical spelling of a `memory:` URI (memory:/p, memory:///p, any
--- percent-encoding), or nil for another scheme.
function M.canonical_memory_uri(uri)
  local path = uri:match('^[mM][eE][mM][oO][rR][yY]:/*([^?#]*)')
  return path and ('memory:///' .. encode_path(vim.uri_decode(path)))
end

--- The workspace (a decoded path) of a `memory://<workspace>/MEMORY.md` name, or nil.
function M.memory_root(name)
  local root = name:match('^memory://(.*)/MEMORY%.md$')
  return root and vim.uri_decode(root)
end

--- The workspace commands act on: the current memory buffer's, else the
--- current file's root, else the current directory's root, else the directory.
function M.workspace()
  local name = vim.api.nvim_buf_get_name(0)
  local memory = M.memory_root(name)
  if memory then
    return memory
  end
  local root = name ~= '' and not name:match('^%a+://') and vim.fs.root(0, markers)
  return root or vim.fs.root(vim.fn.getcwd(), markers) or vim.fn.getcwd()
end

--- The first line of a buffer (or of its file when the buffer is not loaded).
local function first_line(bufnr)
  if vim.api.nvim_buf_is_loaded(bufnr) then
    return vim.api.nvim_buf_get_lines(bufnr, 0, 1, false)[1] or ''
  end
  local ok, lines = pcall(vim.fn.readfile, vim.api.nvim_buf_get_name(bufnr), '', 1)
  return ok and lines[1] or ''
end

--- Whether a buffer holds a mnemo document on disk: a mirror (whatever its
--- configured name) or a checkout kept in a file (`mnemo checkout --out F`).
function M.is_memory_file(bufnr)
  local header = first_line(bufnr)
  return header:match('^<!%-%- mnemo mirror') ~= nil or header:match('^<!%-%- mnemo checkout') ~= nil
end

--- `root_dir` for vim.lsp.config: memory buffers always; a mirror or a
--- checkout file (by its header line, or named MEMORY.md); source files of a
--- workspace with a memory; unrelated markdown never.
function M.root_dir(bufnr, on_dir)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local memory = M.memory_root(name)
  if memory then
    return on_dir(memory)
  end
  if name == '' or name:match('^%a+://') then
    return
  end
  local root = vim.fs.root(bufnr, markers)
  if M.is_memory_file(bufnr) then
    return on_dir(root or vim.fs.dirname(name))
  end
  if not root then
    return
  end
  if vim.fs.basename(name) == 'MEMORY.md' then
    return on_dir(root)
  end
  if vim.bo[bufnr].filetype == 'markdown' then
    return
  end
  if vim.uv.fs_stat(root .. '/.mnemo') or vim.uv.fs_stat(root .. '/MEMORY.md') then
    on_dir(root)
  end
end

--- The running mnemo client for `root`, started when there is none (or it
--- died); waits until it is initialized.
function M.client(root)
  for _, client in ipairs(vim.lsp.get_clients({ name = 'mnemo' })) do
    if client.root_dir == root and not client:is_stopped() then
      return client
    end
  end
  local config = vim.tbl_extend('force', vim.lsp.config.mnemo or {}, { name = 'mnemo', root_dir = root })
  local id = vim.lsp.start(config, { attach = false })
  local client = id and vim.lsp.get_client_by_id(id)
  if not client then
    error('mnemo: cannot start `' .. M.binary() .. ' lsp`; is mnemo installed? (:checkhealth mnemo)')
  end
  vim.wait(10000, function()
    return client.initialized
  end, 20)
  return client
end

--- A request to the server, waited for; its result, or an error saying why.
function M.request(client, method, params, bufnr)
  local response, err = client:request_sync(method, params, 30000, bufnr)
  if not response then
    error('mnemo: ' .. method .. ' got no answer: ' .. tostring(err))
  end
  if response.err then
    error('mnemo: ' .. (response.err.message or vim.inspect(response.err)))
  end
  return response.result
end

--- Run a server command with the arguments given; the result or an error.
function M.execute(command, arguments)
  local client = M.client(M.workspace())
  return M.request(client, 'workspace/executeCommand', { command = command, arguments = arguments })
end

--- The workspace's mirror file as the server reads its config
--- (`[memory_export] path`): `{ path = string|nil, enabled = boolean }`.
function M.mirror(root)
  local client = M.client(root)
  local result = M.request(client, 'memory/mirror', { workspace = root })
  return { path = result.path ~= vim.NIL and result.path or nil, enabled = result.enabled == true }
end

--- The last recall summary the server logged (what was hidden).
M.last_recall = nil

function M.on_log_message(err, params, ctx)
  if params and params.message and params.message:match('^mnemo recall ') then
    M.last_recall = params.message
  end
  return vim.lsp.handlers['window/logMessage'](err, params, ctx)
end

--- The note id under the cursor (`#12` or `[#12]`), or nil.
function M.id_under_cursor()
  local line = vim.api.nvim_get_current_line()
  local col = vim.api.nvim_win_get_cursor(0)[2] + 1
  for start, digits in line:gmatch('()#(%d+)') do
    if col >= start - 1 and col <= start + #digits + 1 then
      return tonumber(digits)
    end
  end
  return tonumber(line:match('^%- %[#(%d+)%]'))
end

--- What each server command that needs a reason asks.
local reason_prompts = {
  ['mnemo.revoke'] = 'Revoke #%d, because: ',
  ['mnemo.flagStale'] = 'Flag #%d stale, because: ',
  ['mnemo.reject'] = 'Reject #%d, because: ',
}

--- Ask why `command` should run on note `id`; `on_reason(reason)` only when
--- one is given (the code actions and `:Mnemo revoke|stale` both ask here).
function M.ask_reason(command, id, on_reason)
  vim.ui.input({ prompt = reason_prompts[command]:format(id) }, function(reason)
    if not reason or vim.trim(reason) == '' then
      return vim.notify('mnemo: nothing done (no reason given)', vim.log.levels.WARN)
    end
    on_reason(reason)
  end)
end

--- How a note state reads in a confirmation.
local state_words = { stale_flagged = 'flagged stale' }

--- The confirmation of a note command's result (`{ id, state }`):
--- "mnemo: #12 is revoked", "mnemo: #12 is flagged stale".
function M.confirm(result)
  local state = result.state and (state_words[result.state] or result.state) or 'done'
  vim.notify(('mnemo: #%s is %s'):format(result.id, state))
end

return M
