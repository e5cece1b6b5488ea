-- mnemo: `:Mnemo <sub>`, `memory://` buffers, and <Plug> mappings. No
-- default mappings, no setup() call needed; `vim.lsp.enable('mnemo')` starts
-- the language server (lsp/mnemo.lua). See :help mnemo.
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
  desc = 'mnemo: edit, mirror, recall, remember, revoke, stale, reinstate, promote, history, check',
})

local group = vim.api.nvim_create_augroup('mnemo', { clear = true })
vim.api.nvim_create_autocmd('BufReadCmd', {
  group = group,
  pattern = 'memory://*',
  callback = function(args)
    local ok, err = pcall(require('mnemo').read, args.buf)
    if not ok then
      vim.notify(tostring(err), vim.log.levels.ERROR)
    end
  end,
})
vim.api.nvim_create_autocmd('BufWriteCmd', {
  group = group,
  pattern = 'memory://*',
  callback = function(args)
    require('mnemo').write(args.buf)
  end,
})

local map = vim.keymap.set
map('n', '<Plug>(MnemoEdit)', '<Cmd>Mnemo edit<CR>', { desc = 'mnemo: edit the memory' })
map('n', '<Plug>(MnemoMirror)', '<Cmd>Mnemo mirror<CR>', { desc = 'mnemo: open MEMORY.md' })
map('n', '<Plug>(MnemoRecall)', '<Cmd>Mnemo recall<CR>', { desc = 'mnemo: recall' })
map('n', '<Plug>(MnemoRemember)', '<Cmd>Mnemo remember<CR>', { desc = 'mnemo: remember' })
map('x', '<Plug>(MnemoRemember)', ':Mnemo remember<CR>', { desc = 'mnemo: remember, anchored to the selection' })
map('n', '<Plug>(MnemoRevoke)', '<Cmd>Mnemo revoke<CR>', { desc = 'mnemo: revoke the note under the cursor' })
map('n', '<Plug>(MnemoStale)', '<Cmd>Mnemo stale<CR>', { desc = 'mnemo: flag the note under the cursor stale' })
map('n', '<Plug>(MnemoHistory)', '<Cmd>Mnemo history<CR>', { desc = 'mnemo: history of the note under the cursor' })
map('n', '<Plug>(MnemoCheck)', '<Cmd>Mnemo check<CR>', { desc = 'mnemo: check anchors for drift' })
