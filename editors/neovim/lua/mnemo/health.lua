--- :checkhealth mnemo — the binary and its version, whether the server is
--- enabled, lenses and hints, the store, the model and the ranking mode
--- recall runs in.
local M = {}

function M.check()
  local mnemo = require('mnemo')
  vim.health.start('mnemo')
  local binary = mnemo.binary()
  if vim.fn.executable(binary) ~= 1 then
    vim.health.error(('`%s` is not executable'):format(binary), {
      'Install it with scripts/setup (cargo install), or set vim.g.mnemo = { binary = "/path/to/mnemo" }',
    })
    return
  end
  local version = vim.system({ binary, '--version' }, { text = true }):wait()
  if version.code ~= 0 then
    vim.health.error('`' .. binary .. ' --version` failed: ' .. vim.trim(version.stderr))
    return
  end
  vim.health.ok(vim.trim(version.stdout) .. ' (' .. vim.fn.exepath(binary) .. ')')
  if vim.fn.has('nvim-0.11') ~= 1 then
    vim.health.error('Neovim 0.11 or newer is needed (vim.lsp.config)')
  end
  local enabled = vim.lsp.is_enabled and vim.lsp.is_enabled('mnemo') or (vim.lsp._enabled_configs or {}).mnemo ~= nil
  if enabled then
    vim.health.ok("the language server is enabled (vim.lsp.enable('mnemo'))")
  else
    vim.health.warn('the language server is not enabled: memory buffers work, but no diagnostics, hover or lenses', {
      "Add vim.lsp.enable('mnemo') to your config",
    })
  end
  local o = mnemo.options()
  local function on(value)
    return value == false and 'off' or 'on'
  end
  vim.health.info(('code lens %s, inlay hints %s (vim.g.mnemo.code_lens, .inlay_hints)'):format(on(o.code_lens), on(o.inlay_hints)))
  local cwd = mnemo.workspace()
  -- `store stats` reports the store and the ranking recall runs in.
  local stats = mnemo.run_cli({ '--json', 'store', 'stats' })
  if stats.code ~= 0 then
    vim.health.error('the store cannot be read: ' .. vim.trim(stats.stderr))
    return
  end
  local decoded = vim.json.decode(stats.stdout)
  vim.health.ok(('store: %d notes, epoch %d, workspace %s'):format(decoded.stats.notes, decoded.stats.epoch, cwd))
  if decoded.ranking == 'hybrid' then
    vim.health.ok('model loaded: recall runs hybrid')
  else
    local why = decoded.ranking_reason ~= vim.NIL and (' (' .. decoded.ranking_reason .. ')') or ''
    vim.health.warn('recall runs ' .. decoded.ranking .. why, { 'Run scripts/install-model, or set vim.g.mnemo.model_dir' })
  end
end

return M
