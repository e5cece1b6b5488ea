--- mnemo for Neovim: the memory of AI coding agents as an editable buffer.
--- A thin client of `mnemo lsp`: `memory://` buffers are fetched with
--- `memory/checkout` and saved with `memory/checkin`; everything else is the
--- language server's (hover, diagnostics, code actions, symbols).
local M = {}

--- Options from `vim.g.mnemo` (all optional): `binary`, `store_path`,
--- `model_dir`, `debounce_ms`.
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

--- The server settings (initializationOptions) from `vim.g.mnemo`.
function M.settings()
  local o = M.options()
  return { storePath = o.store_path, modelDir = o.model_dir, debounceMs = o.debounce_ms }
end

--- What marks a workspace root (`vim.fs.root` markers). `root_dir` below decides
--- which buffers attach, so lsp/mnemo.lua sets no `root_markers`.
M.markers = { '.mnemo', 'MEMORY.md', '.git' }
local markers = M.markers

--- The workspace of a `memory://<workspace>/MEMORY.md` name, or nil.
function M.memory_root(name)
  return name:match('^memory://(.*)/MEMORY%.md$')
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

--- `root_dir` for vim.lsp.config: memory buffers always; source files of a
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

--- The mnemo client for `root`, started when there is none; waits until it is initialized.
function M.client(root)
  for _, client in ipairs(vim.lsp.get_clients({ name = 'mnemo' })) do
    if client.root_dir == root then
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

local function request(client, method, params, bufnr)
  local response, err = client:request_sync(method, params, 30000, bufnr)
  if not response then
    error('mnemo: ' .. method .. ' got no answer: ' .. tostring(err))
  end
  if response.err then
    error('mnemo: ' .. (response.err.message or vim.inspect(response.err)))
  end
  return response.result
end

local function set_text(bufnr, text)
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modified = false
end

--- BufReadCmd of `memory://…`: fetch a checkout.
function M.read(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local root = M.memory_root(name)
  if not root then
    return vim.notify('mnemo: a memory buffer is named memory://<workspace>/MEMORY.md', vim.log.levels.ERROR)
  end
  local client = M.client(root)
  local result = request(client, 'memory/checkout', { workspace = root }, bufnr)
  vim.bo[bufnr].buftype = 'acwrite'
  vim.bo[bufnr].swapfile = false
  set_text(bufnr, result.text)
  vim.b[bufnr].mnemo_epoch = result.epoch
  vim.bo[bufnr].filetype = 'markdown'
  vim.lsp.buf_attach_client(bufnr, client.id)
end

--- BufWriteCmd of `memory://…`: check in; the buffer becomes the new render,
--- with everything that was not applied kept as typed.
function M.write(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local client = M.client(M.memory_root(name))
  local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') .. '\n'
  local ok, result = pcall(request, client, 'memory/checkin', { uri = name, text = text }, bufnr)
  if not ok then
    return vim.notify(result .. '; nothing was checked in, your text is unchanged', vim.log.levels.ERROR)
  end
  if result.text then
    set_text(bufnr, result.text)
    vim.b[bufnr].mnemo_epoch = result.epoch
  end
  local said = #result.applied > 0 and table.concat(result.applied, '; ') or 'nothing to check in'
  local left = #result.diagnostics
  if left > 0 then
    said = said .. ('; %d left to resolve (conflicts and errors are marked; see code actions)'):format(left)
  end
  vim.notify('mnemo: ' .. said, left > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
end

--- `memory/didChange`: a clean memory buffer takes the new render.
function M.on_memory_did_change(_, params)
  local bufnr = vim.fn.bufnr(params.uri)
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) and not vim.bo[bufnr].modified then
    set_text(bufnr, params.text)
    vim.b[bufnr].mnemo_epoch = params.epoch
  end
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

--- Run a server command with the arguments given; the result or an error.
function M.execute(command, arguments)
  local client = M.client(M.workspace())
  return request(client, 'workspace/executeCommand', { command = command, arguments = arguments })
end

--- What each server command that needs a reason asks.
local reason_prompts = {
  ['mnemo.revoke'] = 'Revoke #%d, because: ',
  ['mnemo.flagStale'] = 'Flag #%d stale, because: ',
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

--- A code action's command that needs a reason: asked for unless the action carries one.
local function with_reason(command)
  return function(cmd, ctx)
    local id = cmd.arguments[1]
    local client = vim.lsp.get_client_by_id(ctx.client_id)
    local function run(reason)
      client:request('workspace/executeCommand', { command = command, arguments = { id, reason } }, function(err)
        if err then
          vim.notify('mnemo: ' .. err.message, vim.log.levels.ERROR)
        end
      end)
    end
    if cmd.arguments[2] then
      return run(cmd.arguments[2])
    end
    M.ask_reason(command, id, run)
  end
end

vim.lsp.commands['mnemo.revoke'] = with_reason('mnemo.revoke')
vim.lsp.commands['mnemo.flagStale'] = with_reason('mnemo.flagStale')
vim.lsp.commands['mnemo.forget'] = function(cmd, ctx)
  local id = cmd.arguments[1]
  vim.ui.input({ prompt = ('Forget #%d and its history for good? Type "confirm": '):format(id) }, function(answer)
    if answer == 'confirm' then
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      client:request('workspace/executeCommand', { command = 'mnemo.forget', arguments = { id, 'confirm' } })
    end
  end)
end
vim.lsp.commands['mnemo.showHistory'] = function(cmd, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  local result = request(client, 'workspace/executeCommand', cmd)
  vim.lsp.util.open_floating_preview(vim.split(result.markdown, '\n'), 'markdown', { border = 'rounded' })
end

return M
