-- The language server dies (killed) while the person has unsaved edits in
-- the memory buffer. Nothing typed is lost: the buffer keeps its text; :w
-- starts a new server, checks the edits in, and the buffer is attached to
-- the new server (its diagnostics and refreshes work again).
local H = require('helper')
local check = H.check

H.workspace()
H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting' })
H.cli({ 'export', '--enable' })
H.start({ binary = H.binary, debounce_ms = 20 })

local memory = H.open_memory()
local first = H.client(memory)
H.edit(memory, function(text)
  return (text:gsub('## Tasks\n', '## Tasks\n\n- low · Typed before the crash\n', 1))
end)

-- Kill this Neovim's `mnemo lsp` child (the test started it; found by its pid).
local killed = 0
for _, child in ipairs(vim.api.nvim_get_proc_children(vim.fn.getpid())) do
  local info = vim.api.nvim_get_proc(child)
  if info and info.name and info.name:find('mnemo', 1, true) then
    vim.uv.kill(child, 'sigkill')
    killed = killed + 1
  end
end
check('the server was killed', killed == 1, killed)
check('Neovim sees the client stop', H.wait(10000, function() return first:is_stopped() end))
check('the typed text is still in the buffer, modified', H.has(memory, 'Typed before the crash') and vim.bo[memory].modified)

vim.cmd('write')
local created = H.notes_by_title()['Typed before the crash']
check(':w after the crash checks the edit in (a new server)', created ~= nil and created.provenance == 'human', created)
check('the buffer is the new render, saved', not vim.bo[memory].modified and H.has(memory, ('[#%d]'):format(created and created.id or -1)))
local second = vim.lsp.get_clients({ bufnr = memory, name = 'mnemo' })[1]
check('the buffer is attached to the new server', second ~= nil and second.id ~= first.id, second and second.id)

-- The new server works for this buffer: a malformed entry is marked, an agent write refreshes.
H.edit(memory, function(text)
  return (text:gsub('## Tasks\n', '## Tasks\n\n- urgent · Marked by the new server\n', 1))
end)
check('diagnostics come from the new server', H.wait(10000, function()
  return #vim.diagnostic.get(memory, { severity = vim.diagnostic.severity.ERROR }) > 0
end), vim.diagnostic.get(memory))
vim.cmd('Mnemo discard')
H.remember({ '--kind', 'finding', '--title', 'Written after the restart' })
check('an agent write refreshes the buffer through the new server', H.wait(15000, function()
  return H.has(memory, 'Written after the restart')
end), H.text(memory))

H.finish()
