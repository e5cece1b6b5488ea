--- Code lens and inlay hints, on by default where mnemo has them: inlay
--- hints (provenance · age after each entry's id) on memory buffers, mirrors
--- and checkout files; code lenses ("1 note: #12") over anchored lines of
--- source files, and Accept / Reject… over each proposal in a memory buffer. Only the mnemo client is asked, so other language servers'
--- hints and lenses stay as the person set them. `vim.g.mnemo.inlay_hints =
--- false` or `code_lens = false` turns either off (read when a buffer attaches).
local mnemo = require('mnemo')

local M = {}

local group = vim.api.nvim_create_augroup('mnemo.display', { clear = true })

local function client_of(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'mnemo' })[1]
end

--- Whether a buffer shows the memory itself (memory://, a mirror, a checkout file).
local function is_memory(bufnr)
  return mnemo.memory_root(vim.api.nvim_buf_get_name(bufnr)) ~= nil or mnemo.is_memory_file(bufnr)
end

--- Fetch and show the mnemo client's code lenses of a buffer.
function M.refresh(bufnr)
  if mnemo.options().code_lens == false or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local client = client_of(bufnr)
  if not client or not client:supports_method('textDocument/codeLens') then
    return
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  client:request('textDocument/codeLens', params, function(err, result, ctx)
    if vim.api.nvim_buf_is_loaded(bufnr) then
      vim.lsp.codelens.on_codelens(err, result or {}, ctx)
    end
  end, bufnr)
end

--- LspAttach of the mnemo client (plugin/mnemo.lua): hints on for memory
--- buffers; lenses fetched now and kept current when the buffer is
--- entered, left insert mode, is written, or its diagnostics change (the
--- server republishes them when anchors drift or the memory changes).
function M.on_attach(bufnr, client)
  local options = mnemo.options()
  if is_memory(bufnr) and options.inlay_hints ~= false and client:supports_method('textDocument/inlayHint') then
    vim.lsp.inlay_hint.enable(true, { bufnr = bufnr })
  end
  if options.code_lens == false then
    return
  end
  vim.api.nvim_clear_autocmds({ group = group, buffer = bufnr })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost', 'DiagnosticChanged' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      M.refresh(bufnr)
    end,
  })
  M.refresh(bufnr)
end

return M
