-- mnemo's language server, for `vim.lsp.enable('mnemo')` (Neovim 0.11+).
-- Attaches to memory buffers (memory://…, the mirror, checkout files) and to
-- the source files of a workspace that has a memory (a `.mnemo/` folder or a
-- MEMORY.md), never to unrelated markdown. Options come from `vim.g.mnemo`
-- (see :help mnemo), read when a server starts.
local mnemo = require('mnemo')
local memory = require('mnemo.memory')
require('mnemo.actions')

return {
  cmd = function(dispatchers)
    return vim.lsp.rpc.start({ mnemo.binary(), 'lsp' }, dispatchers)
  end,
  root_dir = mnemo.root_dir,
  init_options = mnemo.settings(),
  before_init = function(params)
    -- vim.g.mnemo as it is now, always a JSON object.
    params.initializationOptions = mnemo.settings()
  end,
  handlers = {
    ['memory/didChange'] = memory.on_did_change,
    ['window/logMessage'] = mnemo.on_log_message,
  },
}
