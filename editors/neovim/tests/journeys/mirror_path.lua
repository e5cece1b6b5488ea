-- A workspace whose mirror is configured at docs/MEMORY.md ([memory_export]
-- path): :Mnemo mirror opens that file (never <root>/MEMORY.md), the client
-- attaches to it, recall and go-to-definition land in it; renamed to
-- docs/agent-memory.md it is still found and attached (by its header line).
-- A checkout kept in a file attaches too, and :w there checks it in.
local H = require('helper')
local check, cli = H.check, H.cli

local root = H.workspace()
vim.fn.mkdir(root .. '/docs', 'p')
local lock = H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting' })
vim.fn.writefile({ 'fn main() {}', '// see #' .. lock .. ' before touching this', 'restart(guard);' }, root .. '/src/lock.rs')
cli({ 'export', '--enable', '--path', 'docs/MEMORY.md' })
local configured = root .. '/docs/MEMORY.md'
H.start({ binary = H.binary, debounce_ms = 20 })

local function here()
  return vim.api.nvim_buf_get_name(0), vim.api.nvim_win_get_cursor(0)[1] - 1
end

-- :Mnemo mirror, from a source file.
vim.cmd.edit(root .. '/src/lock.rs')
local source = vim.api.nvim_get_current_buf()
H.client(source)
vim.cmd('Mnemo mirror')
local name = here()
check(':Mnemo mirror opens the configured docs/MEMORY.md', name == configured, name)
check('no MEMORY.md appears at the workspace root', vim.uv.fs_stat(root .. '/MEMORY.md') == nil)
local mirror = vim.api.nvim_get_current_buf()
check('the client attaches to the configured mirror', H.client(mirror) ~= nil)
local entry = H.line_of(mirror, '^%- %[#' .. lock .. '%]')
check('the mirror shows the note', entry ~= nil, H.text(mirror))

-- Recall (workspace symbols) lands in it.
vim.ui.select = function(items, _, on_choice) on_choice(items[1]) end
vim.cmd('buffer ' .. source)
vim.cmd('Mnemo recall lock restarting')
local at, line = here()
check(':Mnemo recall opens the note in docs/MEMORY.md at its entry', at == configured and line == entry, { at, line, entry })

-- Go to definition of #id in a source comment lands in it.
vim.cmd('buffer ' .. source)
vim.api.nvim_win_set_cursor(0, { 2, ('// see #'):len() })
vim.lsp.buf.definition()
check('go-to-definition of #id lands on its entry in docs/MEMORY.md', H.wait(10000, function()
  local n, l = here()
  return n == configured and l == entry
end), { here() })

-- Renamed: docs/agent-memory.md, found by :Mnemo mirror and attached by its header.
cli({ 'export', '--enable', '--path', 'docs/agent-memory.md' })
vim.cmd('buffer ' .. source)
vim.cmd('Mnemo mirror')
name = here()
check(':Mnemo mirror follows the config to docs/agent-memory.md', name == root .. '/docs/agent-memory.md', name)
local renamed = vim.api.nvim_get_current_buf()
check('the client attaches to a mirror not named MEMORY.md (by its header)', H.wait(10000, function()
  return H.attached(renamed)
end))
local hover = H.client(renamed):request_sync('textDocument/hover', {
  textDocument = { uri = vim.uri_from_bufnr(renamed) },
  position = { line = H.line_of(renamed, '^%- %[#' .. lock .. '%]'), character = 4 },
}, 10000, renamed)
check('hover works in the renamed mirror', hover and hover.result and hover.result.contents.value:find('Release the lock', 1, true) ~= nil, hover)

-- Other markdown in docs/ is not attached.
vim.fn.writefile({ '# Design', 'Nothing to do with memory.' }, root .. '/docs/design.md')
vim.cmd.edit(root .. '/docs/design.md')
local design = vim.api.nvim_get_current_buf()
H.wait(1000, function() return H.attached(design) end)
check('unrelated markdown next to the mirror is not attached', not H.attached(design))

-- A checkout kept in a file: attached by its header; :w checks it in and rewrites it.
vim.fn.mkdir(root .. '/notes', 'p')
cli({ 'checkout', '--out', root .. '/notes/draft.md' })
vim.cmd.edit(root .. '/notes/draft.md')
local draft = vim.api.nvim_get_current_buf()
check('a checkout file is attached', H.wait(10000, function() return H.attached(draft) end))
H.edit(draft, function(text)
  return (text:gsub('## Tasks\n', '## Tasks\n\n- low · Typed in a checkout file\n', 1))
end)
vim.cmd('write')
check(':w of the checkout file checked it in', H.wait(10000, function()
  return H.notes_by_title()['Typed in a checkout file'] ~= nil
end))
local created = H.notes_by_title()['Typed in a checkout file']
check('the file on disk is rewritten with the new id', created and H.wait(10000, function()
  return table.concat(vim.fn.readfile(root .. '/notes/draft.md'), '\n'):find(('[#%d] '):format(created.id), 1, true) ~= nil
end), vim.fn.readfile(root .. '/notes/draft.md'))

H.finish()
