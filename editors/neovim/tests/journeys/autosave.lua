-- A person whose config autosaves on InsertLeave (as autosave plugins do,
-- with :update) types a new entry in two goes. The first autosave checks in a
-- half-typed line: it cannot be applied, so it stays exactly as typed, marked,
-- the buffer modified and the cursor where it was; the second, once the entry
-- is complete, creates the note. Nothing half-typed ever reaches the store.
local H = require('helper')
local check = H.check

H.workspace()
H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting' })
H.cli({ 'export', '--enable' })
H.start({ binary = H.binary, debounce_ms = 20 })
local memory = H.open_memory()

-- The autosave plugin: every InsertLeave writes the buffer if it changed.
-- (`nested`, as a plugin writing from a timer is: BufWriteCmd must run. Without
-- it Neovim refuses the write with E676 and nothing is checked in.)
vim.api.nvim_create_autocmd('InsertLeave', { nested = true, command = 'silent! update' })
local notes_before = #H.json({ 'list' }).notes

-- First go: "- hi", then <Esc> (the person will finish it later).
vim.api.nvim_win_set_cursor(0, { H.line_of(memory, '^## Tasks') + 1, 0 })
vim.api.nvim_feedkeys(vim.keycode('o<CR>- hi<Esc>'), 'xt', false)
local typed_line = H.line_of(memory, '^%- hi$')
check('the autosave checked the half-typed line in and kept it as typed', typed_line ~= nil, H.text(memory))
check('it was not applied: the buffer stays modified, one unapplied', vim.bo[memory].modified and vim.b[memory].mnemo_unapplied == 1,
  { modified = vim.bo[memory].modified, unapplied = vim.b[memory].mnemo_unapplied })
check('the cursor is still on the line being typed', vim.api.nvim_win_get_cursor(0)[1] - 1 == typed_line,
  { cursor = vim.api.nvim_win_get_cursor(0), typed_line = typed_line })
check('the half-typed line is marked', H.wait(10000, function()
  return #vim.tbl_filter(function(d) return d.lnum == typed_line end, vim.diagnostic.get(memory)) > 0
end), vim.diagnostic.get(memory))
check('nothing reached the store', #H.json({ 'list' }).notes == notes_before)

-- Second go: finish the entry, <Esc>.
vim.api.nvim_feedkeys(vim.keycode('Agh · Finish the docs<Esc>'), 'xt', false)
local created = H.notes_by_title()['Finish the docs']
check('the completed entry is created by the next autosave, as the person', created and created.priority == 'high'
  and created.provenance == 'human', created)
check('the buffer is saved, nothing unapplied', not vim.bo[memory].modified and vim.b[memory].mnemo_unapplied == 0)
check('the buffer shows the note with its id, where it was typed', created
  and vim.api.nvim_get_current_line():find(('[#%d]'):format(created.id), 1, true) ~= nil, vim.api.nvim_get_current_line())
check('only that note was added to the store', #H.json({ 'list' }).notes == notes_before + 1)

H.finish()
