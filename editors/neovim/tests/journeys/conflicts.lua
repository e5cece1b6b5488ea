-- Conflicts resolved from the code action menu, end to end. Keep mine: my
-- edit of a note an agent flagged stale meanwhile is applied on top of the
-- agent's version. Take theirs: my edit of a note an agent revoked is dropped.
-- Each time: the store (CLI), the buffer, the mirror on disk, diagnostics gone.
local H = require('helper')
local check, cli, json = H.check, H.cli, H.json

local root = H.workspace()
local lock = H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting' })
local cache = H.remember({ '--kind', 'finding', '--title', 'Cache hit ratio is 0.91' })
cli({ 'export', '--enable' })
H.start({ binary = H.binary, debounce_ms = 20 })
local memory = H.open_memory()

local function conflicts()
  return H.diagnostics(memory, 'conflict')
end
local function mirror()
  return table.concat(vim.fn.readfile(root .. '/MEMORY.md'), '\n')
end
-- The language server stands for the mirror: it follows a check-in, so
-- the mirror is waited for until it shows `pattern`.
local function mirror_shows(pattern)
  return H.wait(15000, function() return mirror():find(pattern) ~= nil end)
end

-- Keep mine.
H.edit(memory, function(text)
  return (text:gsub('medium · Release the lock before restarting', 'high · Release the lock before restarting'))
end)
cli({ 'flag-stale', tostring(lock), '--reason', 'an agent doubts it' })
vim.cmd('write')
check('the conflict is shown', H.wait(10000, function() return #conflicts() == 1 end), vim.diagnostic.get(memory))
vim.api.nvim_win_set_cursor(0, { H.line_of(memory, 'high · Release the lock') + 1, 0 })
local offered, picked = H.code_action('^Keep mine')
check('the conflict offers Keep mine and Take theirs for the note', picked
  and vim.tbl_contains(offered, ('Keep mine for #%d'):format(lock)) and vim.tbl_contains(offered, ('Take theirs for #%d'):format(lock)), offered)
check('conflict resolutions are quickfixes', H.kinds[('Keep mine for #%d'):format(lock)] == 'quickfix'
  and H.kinds[('Take theirs for #%d'):format(lock)] == 'quickfix', H.kinds)
local kept = H.wait(10000, function() return H.state(lock) == 'superseded' end)
local history = json({ 'history', tostring(lock) })
check('Keep mine: the note was reinstated and superseded by my edit', kept and history[#history - 1].kind == 'reinstated'
  and history[#history].kind == 'superseded', history)
local mine = H.notes_by_title()['Release the lock before restarting']
check('Keep mine: the new note is mine, high priority, active', mine and mine.id ~= lock and mine.priority == 'high'
  and mine.provenance == 'human' and mine.state == 'active', mine)
check('Keep mine: the buffer is the new render, saved', mine and H.has(memory, ('- [#%d] '):format(mine.id))
  and H.has(memory, ('[#%d] '):format(lock)) and not vim.bo[memory].modified and vim.b[memory].mnemo_unapplied == 0)
check('Keep mine: no conflict left in the buffer', H.wait(10000, function() return #conflicts() == 0 end), vim.diagnostic.get(memory))
check('Keep mine: the mirror on disk has my version', mine and mirror_shows(('%%[#%d%%] [^\n]* · high · Release the lock'):format(mine.id)), mirror())

-- Take theirs.
H.edit(memory, function(text)
  return (text:gsub('Cache hit ratio is 0%.91', 'Cache hit ratio is 0.95'))
end)
cli({ 'revoke', tostring(cache), '--reason', 'the agent measured wrong' })
vim.cmd('write')
check('the second conflict is shown', H.wait(10000, function() return #conflicts() == 1 end), vim.diagnostic.get(memory))
vim.api.nvim_win_set_cursor(0, { H.line_of(memory, 'Cache hit ratio is 0%.95') + 1, 0 })
offered, picked = H.code_action('^Take theirs')
check('Take theirs is picked from the menu', picked, offered)
check('Take theirs: my edit is gone from the buffer, theirs is shown', H.wait(10000, function()
  return not H.has(memory, 'Cache hit ratio is 0.95') and H.has(memory, 'REVOKED')
end), H.text(memory))
check('Take theirs: the buffer is saved and nothing is unapplied', not vim.bo[memory].modified and vim.b[memory].mnemo_unapplied == 0)
check('Take theirs: no conflict left', H.wait(10000, function() return #conflicts() == 0 end), vim.diagnostic.get(memory))
check('Take theirs: the agent\'s revoke stands, my text was never created', H.state(cache) == 'revoked'
  and H.notes_by_title()['Cache hit ratio is 0.95'] == nil)
check('Take theirs: the mirror shows the revoke', mirror_shows(('%%[#%d%%] [^\n]*REVOKED'):format(cache)), mirror())

H.finish()
