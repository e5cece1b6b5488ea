--- Code lens and inlay hints, on by default on every buffer the mnemo client
--- attaches to: inlay hints (provenance · age after each entry's id) on
--- memory buffers and mirrors, code lenses ("1 note: #12") over anchored
--- lines of source files. `vim.g.mnemo.inlay_hints = false` or
--- `code_lens = false` turns either off (read when a buffer attaches).
local M = {}

local group = vim.api.nvim_create_augroup('mnemo.display', { clear = true })

local function client_of(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = 'mnemo' })[1]
end

--- Refresh the code lenses of a buffer the mnemo client is attached to.
function M.refresh(bufnr)
  if require('mnemo').options().code_lens == false or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local client = client_of(bufnr)
  if client and client:supports_method('textDocument/codeLens') then
    vim.lsp.codelens.refresh({ bufnr = bufnr })
  end
end

--- LspAttach of the mnemo client (plugin/mnemo.lua): hints on, lenses fetched now and kept
--- current when the buffer is entered, left insert mode, is written, or its
--- diagnostics change (the server republishes them when anchors drift).
function M.on_attach(bufnr, client)
  local options = require('mnemo').options()
  if options.inlay_hints ~= false and client:supports_method('textDocument/inlayHint') then
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
