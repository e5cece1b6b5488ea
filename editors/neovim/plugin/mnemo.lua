-- mnemo: `:Mnemo <sub>`, `memory://` buffers, code lens and inlay hints on
-- the buffers the mnemo client attaches to, and <Plug> mappings. No default
-- mappings, no setup() call needed; `vim.lsp.enable('mnemo')` starts the
-- language server (lsp/mnemo.lua). See :help mnemo.
if vim.g.loaded_mnemo then
  return
end
vim.g.loaded_mnemo = true

vim.api.nvim_create_user_command('Mnemo', function(opts)
  require('mnemo.commands').run(opts)
end, {
  nargs = '*',
  range = true,
  complete = function(arg_lead, line)
    return require('mnemo.commands').complete(arg_lead, line)
  end,
  desc = 'mnemo: edit, discard, mirror, recall, remember, revoke, stale, reinstate, promote, accept, reject, history, check',
})

local group = vim.api.nvim_create_augroup('mnemo', { clear = true })
vim.api.nvim_create_autocmd('BufReadCmd', {
  group = group,
  pattern = 'memory://*',
  callback = function(args)
    local ok, err = pcall(require('mnemo.memory').read, args.buf)
    if not ok then
      vim.notify(tostring(err), vim.log.levels.ERROR)
    end
  end,
})
vim.api.nvim_create_autocmd('BufWriteCmd', {
  group = group,
  pattern = 'memory://*',
  callback = function(args)
    require('mnemo.memory').write(args.buf)
  end,
})
vim.api.nvim_create_autocmd('LspAttach', {
  group = group,
  callback = function(args)
    local client = vim.lsp.get_client_by_id(args.data.client_id)
    if client and client.name == 'mnemo' then
      require('mnemo.display').on_attach(args.buf, client)
    end
  end,
})

local map = vim.keymap.set
map('n', '<Plug>(MnemoEdit)', '<Cmd>Mnemo edit<CR>', { desc = 'mnemo: edit the memory' })
map('n', '<Plug>(MnemoMirror)', '<Cmd>Mnemo mirror<CR>', { desc = 'mnemo: open the read-only mirror' })
map('n', '<Plug>(MnemoRecall)', '<Cmd>Mnemo recall<CR>', { desc = 'mnemo: recall' })
map('n', '<Plug>(MnemoRemember)', '<Cmd>Mnemo remember<CR>', { desc = 'mnemo: remember' })
map('x', '<Plug>(MnemoRemember)', ':Mnemo remember<CR>', { desc = 'mnemo: remember, anchored to the selection' })
map('n', '<Plug>(MnemoRevoke)', '<Cmd>Mnemo revoke<CR>', { desc = 'mnemo: revoke the note under the cursor' })
map('n', '<Plug>(MnemoStale)', '<Cmd>Mnemo stale<CR>', { desc = 'mnemo: flag the note under the cursor stale' })
map('n', '<Plug>(MnemoHistory)', '<Cmd>Mnemo history<CR>', { desc = 'mnemo: history of the note under the cursor' })
map('n', '<Plug>(MnemoCheck)', '<Cmd>Mnemo check<CR>', { desc = 'mnemo: check anchors for drift' })
map('n', '<Plug>(MnemoDiscard)', '<Cmd>Mnemo discard<CR>', { desc = 'mnemo: drop unsaved memory edits, fresh checkout' })
