-- A workspace whose path has a space and a non-ASCII letter: the memory
-- buffer is named by its canonical URI (percent-encoded as the server
-- spells it), so the server's diagnostics and refreshes reach it; :w and a
-- refresh after an agent write work; hover works in a source file there.
local H = require('helper')
local check = H.check

H.root = H.tmp .. '/my projé'
local root = H.workspace()
local lock = H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting', '--anchor', 'src/lock.rs:2-3' })
H.cli({ 'export', '--enable' })
H.start({ binary = H.binary, debounce_ms = 20 })

local memory = H.open_memory()
local name = vim.api.nvim_buf_get_name(memory)
check('the memory buffer is named by the canonical URI', name == 'memory://' .. H.tmp .. '/my%20proj%C3%A9/MEMORY.md', name)
check('the checkout is in the buffer', H.has(memory, 'Release the lock before restarting'))
check(':Mnemo commands act on the decoded workspace', require('mnemo').workspace() == root, require('mnemo').workspace())

-- A malformed entry: the server's diagnostic reaches this buffer.
H.edit(memory, function(text)
  return (text:gsub('## Tasks\n', '## Tasks\n\n- urgent · Bad priority\n', 1))
end)
check('the server\'s diagnostics land in the memory buffer', H.wait(10000, function()
  return #vim.diagnostic.get(memory, { severity = vim.diagnostic.severity.ERROR }) > 0
end), vim.diagnostic.get(memory))
local phantom = vim.tbl_filter(function(b)
  return b ~= memory and vim.api.nvim_buf_get_name(b):match('^memory:') ~= nil
end, vim.api.nvim_list_bufs())
check('no second buffer for another spelling of the URI', #phantom == 0,
  vim.tbl_map(vim.api.nvim_buf_get_name, phantom))
vim.cmd('Mnemo discard')

-- :w creates a note; an agent's write refreshes the clean buffer.
H.edit(memory, function(text)
  return (text:gsub('## Tasks\n', '## Tasks\n\n- low · Typed in an odd path\n', 1))
end)
vim.cmd('write')
check(':w checks in', H.notes_by_title()['Typed in an odd path'] ~= nil and not vim.bo[memory].modified)
H.remember({ '--kind', 'finding', '--title', 'An agent wrote this' })
check('an agent\'s write refreshes the clean buffer', H.wait(15000, function()
  return H.has(memory, 'An agent wrote this')
end), H.text(memory))

-- The memory typed by hand with the raw path: the same buffer.
vim.cmd.edit(vim.fn.fnameescape('memory://' .. root .. '/MEMORY.md'))
check(':e memory://<raw path>/MEMORY.md shows the open memory buffer', H.wait(5000, function()
  return vim.api.nvim_get_current_buf() == memory
end), vim.api.nvim_buf_get_name(0))
check('and leaves no other memory buffer behind', H.wait(5000, function()
  return #vim.tbl_filter(function(b)
    return b ~= memory and vim.api.nvim_buf_get_name(b):match('^memory:') ~= nil
  end, vim.api.nvim_list_bufs()) == 0
end))

-- A source file there: hover on the anchored lines.
vim.cmd.edit(vim.fn.fnameescape(root .. '/src/lock.rs'))
local source = vim.api.nvim_get_current_buf()
local hover = H.client(source):request_sync('textDocument/hover', {
  textDocument = { uri = vim.uri_from_bufnr(source) },
  position = { line = 1, character = 4 },
}, 10000, source)
check('hover on anchored lines works in that workspace', hover and hover.result
  and vim.inspect(hover.result.contents):find(('#%d'):format(lock), 1, true) ~= nil, hover)

-- Typed by hand when it is not open: the buffer takes the canonical name.
vim.cmd('bwipeout! ' .. memory)
vim.cmd.edit(vim.fn.fnameescape('memory://' .. root .. '/MEMORY.md'))
local typed = vim.api.nvim_get_current_buf()
check('a memory buffer opened by its raw path is renamed to the canonical URI and loaded',
  vim.api.nvim_buf_get_name(typed) == name and H.has(typed, 'An agent wrote this'), vim.api.nvim_buf_get_name(typed))

H.finish()
