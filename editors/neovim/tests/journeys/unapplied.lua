-- Text a check-in cannot apply survives: after :w leaves a conflict and a
-- malformed entry, the buffer shows the new render with both kept as typed,
-- stays modified (so :q refuses with E37) and marked with error diagnostics;
-- three unrelated agent writes later the typed text is still there and still
-- marked, untouched by refreshes. A discard on purpose — :e! or :Mnemo
-- discard — gives a fresh checkout with the agents' notes and nothing unsaved.
local H = require('helper')
local check, cli = H.check, H.cli

local root = H.workspace()
local lock = H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting' })
H.remember({ '--kind', 'finding', '--title', 'Cache hit ratio is 0.91' })
cli({ 'export', '--enable' })
H.start({ binary = H.binary, debounce_ms = 20 })

local memory = H.open_memory()
local win = vim.api.nvim_get_current_win()
-- The person types: a valid new note, a malformed one, and an edit of #lock
-- that an agent's stale flag will turn into a conflict.
H.edit(memory, function(text)
  return (text
    :gsub('## Tasks\n', '## Tasks\n\n- low · Valid typed note\n\n- urgent · Typed with a bad priority\n  Its body, typed too.\n', 1)
    :gsub('medium · Release the lock before restarting', 'high · Release the lock before restarting'))
end)
cli({ 'flag-stale', tostring(lock), '--reason', 'an agent doubts it' })
local from = #H.said
vim.cmd('write')

local created = H.notes_by_title()['Valid typed note']
check(':w applied the valid entry (as human)', created and created.provenance == 'human', created)
check('the buffer shows the new render: the created note has its id', H.has(memory, ('[#%d] '):format(created and created.id or -1)))
check('the malformed entry is kept as typed, with its body', H.has(memory, '- urgent · Typed with a bad priority\n  Its body, typed too.'))
check('the conflicting edit is kept as typed', H.has(memory, 'high · Release the lock before restarting'))
check('the buffer stays modified', vim.bo[memory].modified)
check('b:mnemo_unapplied counts the two entries', vim.b[memory].mnemo_unapplied == 2, vim.b[memory].mnemo_unapplied)
check('the person is told what was not applied', H.said_since(from, '2 not applied') ~= nil, vim.list_slice(H.said, from + 1))

local function marked()
  local bad = H.line_of(memory, '^%- urgent · Typed with a bad priority')
  local conflict = H.line_of(memory, 'high · Release the lock before restarting')
  local on_bad, on_conflict = false, false
  for _, d in ipairs(vim.diagnostic.get(memory, { severity = vim.diagnostic.severity.ERROR })) do
    on_bad = on_bad or d.lnum == bad
    on_conflict = on_conflict or (d.lnum == conflict and d.code == 'conflict')
  end
  return on_bad and on_conflict
end
check('both are marked with error diagnostics on their lines', H.wait(10000, marked), vim.diagnostic.get(memory))
local function on_screen()
  local _, bad = H.screen_row('- urgent · Typed with a bad priority')
  local _, conflict = H.screen_row('high · Release the lock before restarting')
  local modified = false
  for _, row in ipairs(H.screen()) do
    modified = modified or (row:find('MEMORY.md', 1, true) ~= nil and row:find('[+]', 1, true) ~= nil)
  end
  return bad and bad:match('^E ') and conflict and conflict:match('^E ') and modified
end
check('on screen: both lines with an E sign, and the status line says [+]', H.wait(5000, on_screen), H.screen())

-- :q refuses: E37.
local ok, err = pcall(vim.cmd, 'quit')
check(':q fails with E37 (no write since last change)', not ok and tostring(err):find('E37', 1, true) ~= nil, err)
check('the window is still there', vim.api.nvim_win_is_valid(win) and vim.api.nvim_win_get_buf(win) == memory)
-- :wq and :x check in again, the text is still not applied, and Neovim stays
-- (were it to quit, the helper's VimLeavePre guard fails the journey).
local typed_before = H.text(memory)
pcall(vim.cmd, 'wq')
pcall(vim.cmd, 'x')
check(':wq and :x leave Neovim open with the typed text, still modified', H.text(memory) == typed_before
  and vim.bo[memory].modified and vim.b[memory].mnemo_unapplied == 2, H.text(memory))

-- A refresh never replaces it (the client side, whatever the server sends).
local typed = H.text(memory)
require('mnemo.memory').on_did_change(nil, { uri = 'memory:' .. root .. '/MEMORY.md', text = '<!-- a refresh -->\n', epoch = 999 })
check('a memory/didChange leaves a buffer with unapplied text alone', H.text(memory) == typed)

-- Three unrelated agent writes.
local epoch_before = H.json({ 'store', 'stats' }).stats.epoch
for i = 1, 3 do
  H.remember({ '--kind', 'finding', '--title', 'Agent finding ' .. i })
end
-- The server sees the store change: the buffer gets the "store changed" warning.
check('the server noticed the agent writes (store changed warning)', H.wait(15000, function()
  return #H.diagnostics(memory, 'store changed since this checkout') > 0
end), vim.diagnostic.get(memory))
check('three agent writes later the typed text is still there, as typed', H.text(memory) == typed)
check('still modified', vim.bo[memory].modified)
check('still marked as not applied', H.wait(10000, marked), vim.diagnostic.get(memory))
check('still on screen as typed, marked, [+]', H.wait(5000, on_screen), H.screen())
check('the store has the agent notes and not the malformed one', H.json({ 'store', 'stats' }).stats.epoch >= epoch_before + 3
  and H.notes_by_title()['Agent finding 3'] ~= nil and H.notes_by_title()['Typed with a bad priority'] == nil)
check('the conflict was not applied: the agent\'s stale flag stands', H.state(lock) == 'stale_flagged')
-- The language server stands for the mirror: it follows the check-in.
H.wait(15000, function()
  local mirror = table.concat(vim.fn.readfile(root .. '/MEMORY.md'), '\n')
  return mirror:find('Valid typed note', 1, true) and mirror:find('Agent finding 3', 1, true)
end)
local mirror = table.concat(vim.fn.readfile(root .. '/MEMORY.md'), '\n')
check('the mirror on disk has the applied note and the agents\', never the unapplied text', mirror:find('Valid typed note', 1, true)
  and mirror:find('Agent finding 3', 1, true) and not mirror:find('Typed with a bad priority', 1, true)
  and not mirror:find('high · Release the lock', 1, true), mirror)

-- Discard on purpose: :e! is a fresh checkout.
vim.cmd('edit!')
check(':e! gives a fresh checkout, not modified', not vim.bo[memory].modified and vim.b[memory].mnemo_unapplied == 0)
check(':e! dropped the typed text', not H.has(memory, 'Typed with a bad priority') and not H.has(memory, 'high · Release the lock'))
check(':e! shows the agents\' notes', H.has(memory, 'Agent finding 3') and H.has(memory, 'STALE'))
check('no error diagnostics are left after :e!', H.wait(10000, function()
  return #vim.diagnostic.get(memory, { severity = vim.diagnostic.severity.ERROR }) == 0
end), vim.diagnostic.get(memory))

-- A render older than the buffer's (sent before a check-in answered) is ignored.
local fresh = H.text(memory)
require('mnemo.memory').on_did_change(nil, { uri = vim.api.nvim_buf_get_name(memory), text = '<!-- old -->\n',
  epoch = vim.b[memory].mnemo_epoch - 1 })
check('a memory/didChange older than the buffer\'s epoch is ignored', H.text(memory) == fresh)

-- Type something malformed again, :w, then :Mnemo discard.
H.edit(memory, function(text)
  return (text:gsub('## Tasks\n', '## Tasks\n\n- someday · Another bad one\n', 1))
end)
vim.cmd('write')
check('a malformed entry alone leaves the buffer modified', vim.bo[memory].modified and H.has(memory, 'someday · Another bad one'))
from = #H.said
vim.cmd('Mnemo discard')
check(':Mnemo discard gives a fresh checkout', not vim.bo[memory].modified and not H.has(memory, 'Another bad one')
  and H.has(memory, 'Agent finding 3'))
check(':Mnemo discard says so', H.said_since(from, 'discarded') ~= nil)
-- A server that does not send `unapplied`: the error diagnostics of the result count.
local mnemo = require('mnemo')
local request = mnemo.request
mnemo.request = function(...)
  local result = request(...)
  if type(result) == 'table' then
    result.unapplied = nil
  end
  return result
end
H.edit(memory, function(text)
  return (text:gsub('## Tasks\n', '## Tasks\n\n- whenever · Without the count\n', 1))
end)
vim.cmd('write')
mnemo.request = request
check('without `unapplied`, error diagnostics keep the buffer modified', vim.bo[memory].modified
  and vim.b[memory].mnemo_unapplied == 1 and H.has(memory, 'whenever · Without the count'), vim.b[memory].mnemo_unapplied)
vim.cmd('Mnemo discard')

-- (:q itself would now end this Neovim: the buffer is no longer changed.)
check(':q would now quit: nothing unsaved in any buffer', vim.fn.getbufinfo({ bufmodified = 1 })[1] == nil,
  vim.fn.getbufinfo({ bufmodified = 1 }))

H.finish()
