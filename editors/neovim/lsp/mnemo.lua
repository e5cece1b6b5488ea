-- mnemo's language server, for `vim.lsp.enable('mnemo')` (Neovim 0.11+).
-- Attaches to memory buffers (MEMORY.md, memory://…) and to the source files
-- of a workspace that has a memory (a `.mnemo/` folder or a MEMORY.md), never
-- to unrelated markdown. Options come from `vim.g.mnemo` (see :help mnemo).
local mnemo = require('mnemo')

return {
  cmd = function(dispatchers)
    return vim.lsp.rpc.start({ mnemo.binary(), 'lsp' }, dispatchers)
  end,
  root_dir = mnemo.root_dir,
  init_options = mnemo.settings(),
  handlers = {
    ['memory/didChange'] = mnemo.on_memory_did_change,
    ['window/logMessage'] = mnemo.on_log_message,
  },
}
