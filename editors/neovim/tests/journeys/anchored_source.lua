-- A source file with an anchored note, as a person works on it: the lens
-- and hover on the anchored lines; the code moves down (lines inserted
-- above, :w) and the lens follows it; the code is then edited (:w), the lines
-- are marked as changed, and the re-anchor code action offers the lines where
-- the code is now — picked, a new note anchored there supersedes the old one.
local H = require('helper')
local check, json = H.check, H.json

local root = H.workspace()
local id = H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting', '--body', 'Or the new daemon deadlocks.',
  '--anchor', 'src/lock.rs:2-3' })
H.cli({ 'export', '--enable' })
H.start({ binary = H.binary, debounce_ms = 20 })

vim.cmd.edit(root .. '/src/lock.rs')
local source = vim.api.nvim_get_current_buf()
H.client(source)
local function lenses()
  return vim.tbl_map(function(l)
    return { line = l.range.start.line, title = l.command and l.command.title }
  end, vim.lsp.codelens.get(source))
end
local function lens_on(line, note)
  local l = lenses()
  return #l == 1 and l[1].line == line and l[1].title == ('1 note: #%d'):format(note)
end
check('the lens "1 note: #N" is on the first anchored line', H.wait(10000, function() return lens_on(1, id) end), lenses())

-- Hover on an anchored line shows the note, in a float.
local function hover_text()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      return H.text(vim.api.nvim_win_get_buf(win)), win
    end
  end
end
vim.api.nvim_win_set_cursor(0, { 3, 0 })
vim.lsp.buf.hover()
check('hover on the anchored lines shows the note', H.wait(10000, function()
  local text = hover_text()
  return text and text:find('Release the lock before restarting', 1, true) and text:find('Or the new daemon deadlocks.', 1, true)
end), hover_text())
local _, float = hover_text()
if float then
  vim.api.nvim_win_close(float, true)
end

-- The code moves: two lines inserted above, :w.
vim.api.nvim_buf_set_lines(source, 0, 0, false, { '// Restart logic.', 'use std::sync::Mutex;' })
vim.cmd('write')
check('the file on disk has the moved code', vim.deep_equal(vim.fn.readfile(root .. '/src/lock.rs'),
  { '// Restart logic.', 'use std::sync::Mutex;', 'fn main() {}', 'let guard = lock();', 'restart(guard);' }))
check('after the code moved, the lens follows it (line 4)', H.wait(15000, function() return lens_on(3, id) end), lenses())
check('a move alone leaves the note active', H.state(id) == 'active', H.state(id))

-- The anchored code is edited: :w.
vim.api.nvim_buf_set_lines(source, 4, 5, false, { 'restart(guard, Duration::ZERO);' })
vim.cmd('write')
local function changed()
  return vim.tbl_filter(function(d)
    return d.message:find(('memory #%d'):format(id), 1, true) ~= nil
  end, vim.diagnostic.get(source))
end
check('the edited lines are marked as changed since the note', H.wait(15000, function() return #changed() > 0 end),
  vim.diagnostic.get(source))
check('the mark is over the lines where the code is now (4-5)', changed()[1] and changed()[1].lnum == 3, changed())
check('the drift flags the note stale', H.wait(10000, function() return H.state(id) == 'stale_flagged' end), H.state(id))

vim.api.nvim_win_set_cursor(0, { 4, 0 })
local from = #H.said
local offered, picked = H.code_action('^Re%-anchor #' .. id)
check('a re-anchor action is offered', picked, offered)
local reanchor = vim.tbl_filter(function(t) return t:find('^Re%-anchor') end, offered)[1] or ''
check('the re-anchor action offers the lines where the code is now (4-5), not the old ones (2-3)',
  reanchor:find('(lines 4-5)', 1, true) ~= nil, reanchor)

check('the mirror on disk shows the new anchor', H.wait(10000, function()
  return table.concat(vim.fn.readfile(root .. '/MEMORY.md'), '\n'):find('[src/lock.rs:4-5](src/lock.rs#L4-L5)', 1, true) ~= nil
end), vim.fn.readfile(root .. '/MEMORY.md'))
check('re-anchoring supersedes the note', H.wait(10000, function() return H.state(id) == 'superseded' end), H.state(id))
local successor = H.notes_by_title()['Release the lock before restarting']
successor = successor and json({ 'show', tostring(successor.id) })
check('the new note is anchored to the lines as they read now', successor and successor.state == 'active'
  and successor.anchors[1].path == 'src/lock.rs' and successor.anchors[1].start_line == 4 and successor.anchors[1].end_line == 5,
  successor)
check('the person is told', H.wait(5000, function() return H.said_since(from, 're%-anchored') ~= nil end), vim.list_slice(H.said, from + 1))
check('the lens now names the new note on line 4', successor and H.wait(15000, function()
  return lens_on(3, successor.id)
end), lenses())
check('no changed-lines mark is left', H.wait(10000, function() return #changed() == 0 end), changed())

H.finish()
