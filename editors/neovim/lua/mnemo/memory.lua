--- The memory buffer, `memory://<workspace>/MEMORY.md`: read is a
--- `memory/checkout`, :w a `memory/checkin`, `memory/didChange` refreshes a
--- buffer that holds nothing unsaved, and a discard is a fresh checkout.
--- What a check-in did not apply (conflicts, malformed entries) stays in the
--- buffer as typed, and the buffer stays modified until it is applied or
--- discarded on purpose, so nothing typed is lost to a refresh or a :q.
local mnemo = require('mnemo')

local M = {}

--- Make the buffer read `text`, changing only the lines that differ, so the
--- cursor, marks and folds stay on the entries they were on.
local function set_text(bufnr, text)
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  local old = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local hunks = vim.diff(table.concat(old, '\n') .. '\n', table.concat(lines, '\n') .. '\n', { result_type = 'indices' })
  ---@cast hunks integer[][]
  for i = #hunks, 1, -1 do
    local start_old, count_old, start_new, count_new = unpack(hunks[i])
    local replacement = vim.list_slice(lines, start_new, start_new + count_new - 1)
    -- With nothing removed, start_old is the line the new ones go after.
    local first = count_old == 0 and start_old or start_old - 1
    vim.api.nvim_buf_set_lines(bufnr, first, first + count_old, false, replacement)
  end
end

local function buffer_text(bufnr)
  return table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), '\n') .. '\n'
end

--- The loaded memory buffer of a `memory:` URI (any spelling: memory:/p,
--- memory:///p, percent-encoded or not) other than `except`, or nil.
function M.buffer(uri, except)
  local wanted = mnemo.canonical_memory_uri(uri)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(bufnr)
    if wanted and bufnr ~= except and vim.api.nvim_buf_is_loaded(bufnr) and mnemo.canonical_memory_uri(name) == wanted then
      return bufnr
    end
  end
end

--- BufReadCmd of `memory://…` (and :e!, :Mnemo discard): a fresh checkout
--- replaces the buffer; whatever was unsaved is dropped.
function M.read(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local root = mnemo.memory_root(name)
  if not root then
    return vim.notify('mnemo: a memory buffer is named memory://<workspace>/MEMORY.md', vim.log.levels.ERROR)
  end
  if name ~= mnemo.memory_name(root) then
    -- Typed with another spelling (`:e memory:///my proj/MEMORY.md`): take the
    -- server's, or its diagnostics and refreshes would go to another buffer.
    local open = M.buffer(name, bufnr)
    if open then
      -- That memory is open already: show its buffer instead of this one.
      return vim.schedule(function()
        for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
          vim.api.nvim_win_set_buf(win, open)
        end
        pcall(vim.api.nvim_buf_delete, bufnr, { force = true })
      end)
    end
    vim.api.nvim_buf_set_name(bufnr, mnemo.memory_name(root))
  end
  local client = mnemo.client(root)
  local result = mnemo.request(client, 'memory/checkout', { workspace = root }, bufnr)
  vim.bo[bufnr].buftype = 'acwrite'
  vim.bo[bufnr].swapfile = false
  set_text(bufnr, result.text)
  vim.bo[bufnr].modified = false
  vim.b[bufnr].mnemo_epoch = result.epoch
  vim.b[bufnr].mnemo_unapplied = 0
  vim.bo[bufnr].filetype = 'markdown'
  vim.lsp.buf_attach_client(bufnr, client.id)
end

--- How many entries a check-in result left unapplied: `unapplied`, or for a
--- server that does not send it, the error diagnostics (conflicts, refusals).
local function unapplied_of(result)
  if type(result.unapplied) == 'number' then
    return result.unapplied
  end
  local errors = 0
  for _, d in ipairs(result.diagnostics or {}) do
    if d.severity == vim.lsp.protocol.DiagnosticSeverity.Error then
      errors = errors + 1
    end
  end
  return errors
end

--- Put a check-in result into the buffer: the new render with what was not
--- applied carried over as typed. The buffer stays modified while anything
--- is unapplied (`b:mnemo_unapplied`), so :q warns and refreshes leave it be.
local function take(bufnr, result)
  local unapplied = unapplied_of(result)
  if type(result.text) == 'string' then
    set_text(bufnr, result.text)
    vim.b[bufnr].mnemo_epoch = result.epoch
  elseif unapplied == 0 then
    -- No new text (the header could not be read): the buffer stays as typed.
    unapplied = math.max(1, #(result.diagnostics or {}))
  end
  vim.b[bufnr].mnemo_unapplied = unapplied
  vim.bo[bufnr].modified = unapplied > 0
  return unapplied
end

--- Check the buffer in (:w, and the Keep mine / Take theirs code actions
--- with `resolutions` = `{ keepMine = {id}, takeTheirs = {id} }`).
function M.write(bufnr, resolutions)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local ok, result = pcall(function()
    local client = mnemo.client(mnemo.memory_root(name))
    -- A server started since the buffer was read (the last one died) gets it too.
    if not vim.lsp.buf_is_attached(bufnr, client.id) then
      vim.lsp.buf_attach_client(bufnr, client.id)
    end
    local params = vim.tbl_extend('force', { uri = name, text = buffer_text(bufnr) }, resolutions or {})
    return mnemo.request(client, 'memory/checkin', params, bufnr)
  end)
  if not ok then
    return vim.notify(tostring(result) .. '; nothing was checked in, your text is unchanged', vim.log.levels.ERROR)
  end
  local unapplied = take(bufnr, result)
  local said = #result.applied > 0 and table.concat(result.applied, '; ') or 'nothing to check in'
  if unapplied > 0 then
    said = said .. ('; %d not applied, kept as typed and marked (fix and :w, or :Mnemo discard)'):format(unapplied)
  end
  vim.notify('mnemo: ' .. said, unapplied > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
  require('mnemo.display').refresh(bufnr)
end

--- `:Mnemo discard`: drop what the buffer holds unsaved and take a fresh checkout.
function M.discard(bufnr)
  if not mnemo.memory_root(vim.api.nvim_buf_get_name(bufnr)) then
    error('mnemo: :Mnemo discard works on a memory buffer (:Mnemo edit)')
  end
  M.read(bufnr)
  vim.notify('mnemo: discarded; the buffer is a fresh checkout')
end

--- `memory/didChange`: a memory buffer that holds nothing unsaved and
--- nothing unapplied takes the new render; any other is left alone, and so
--- is a render older than the buffer's (one sent before a check-in answered).
function M.on_did_change(_, params)
  local bufnr = M.buffer(params.uri)
  if not bufnr or vim.bo[bufnr].modified or (vim.b[bufnr].mnemo_unapplied or 0) > 0 then
    return
  end
  if (vim.b[bufnr].mnemo_epoch or -1) > params.epoch then
    return
  end
  set_text(bufnr, params.text)
  vim.bo[bufnr].modified = false
  vim.b[bufnr].mnemo_epoch = params.epoch
end

return M
