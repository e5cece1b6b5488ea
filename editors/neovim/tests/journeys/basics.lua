-- A first session: the client attaches to MEMORY.md and not to unrelated
-- markdown; hover shows a note's body; the Revoke code action asks why, does
-- nothing when dismissed, and says what it did; :Mnemo edit, an edit and :w
-- become events; :checkhealth mnemo; :Mnemo recall, remember and completion.
local H = require('helper')
local check, cli, json = H.check, H.cli, H.json

local root = H.workspace()
local lock = H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting', '--body', 'Or the new daemon deadlocks.' })
local cache = H.remember({ '--kind', 'finding', '--title', 'Cache hit ratio is 0.91' })
cli({ 'export', '--enable' })
H.start({ binary = H.binary, debounce_ms = 20 })

-- Unrelated markdown: never attached.
vim.cmd.edit(root .. '/README.md')
local readme = vim.api.nvim_get_current_buf()
H.wait(1000, function() return H.attached(readme) end)
check('not attached to unrelated markdown', not H.attached(readme))

-- The mirror: attached; hover shows the body.
vim.cmd.edit(root .. '/MEMORY.md')
local mirror = vim.api.nvim_get_current_buf()
check('attached to MEMORY.md', H.wait(10000, function() return H.attached(mirror) end))
local client = H.client(mirror)
local lock_line = H.line_of(mirror, '^%- %[#' .. lock .. '%]')
local hover = client:request_sync('textDocument/hover', {
  textDocument = { uri = vim.uri_from_bufnr(mirror) },
  position = { line = lock_line, character = 4 },
}, 10000, mirror)
local body = hover and hover.result and hover.result.contents.value or ''
check('hover returns the body', body:find('Or the new daemon deadlocks.', 1, true) ~= nil, body)

-- The Revoke code action, picked from the menu: it asks why.
vim.api.nvim_win_set_cursor(0, { lock_line + 1, 0 })
local asked = H.answer(nil)
local offered, picked = H.code_action('^Revoke')
check('a Revoke code action is offered on the entry', picked, offered)
check('actions on an entry are of kind refactor.mnemo', H.kinds[('Revoke #%d…'):format(lock)] == 'refactor.mnemo', H.kinds)
-- Give a request that should not have been sent the time to land.
H.wait(500, function() return H.state(lock) ~= 'active' end)
check('the code action asks why, and a dismissed prompt does nothing',
  asked() == ('Revoke #%d, because: '):format(lock) and H.state(lock) == 'active', asked())
local from = #H.said
H.answer('wrong lock order')
H.code_action('^Revoke')
check('the code action revoked the note', H.wait(10000, function() return H.state(lock) == 'revoked' end),
  json({ 'show', tostring(lock) }))
check('the code action says what it did: "mnemo: #N is revoked"',
  H.wait(5000, function() return H.said_since(from, ('^mnemo: #%d is revoked$'):format(lock)) ~= nil end),
  vim.list_slice(H.said, from + 1))

-- Flag stale through the code action: asked, done, confirmed.
vim.api.nvim_win_set_cursor(0, { H.line_of(mirror, '^%- %[#' .. cache .. '%]') + 1, 0 })
from = #H.said
asked = H.answer('measured again')
H.code_action('^Flag #%d+ stale')
check('Flag stale… asks why for that note', asked() == ('Flag #%d stale, because: '):format(cache), asked())
check('the stale code action flagged it and said so', H.wait(10000, function()
  return H.state(cache) == 'stale_flagged' and H.said_since(from, ('^mnemo: #%d is flagged stale$'):format(cache)) ~= nil
end), { state = H.state(cache), said = vim.list_slice(H.said, from + 1) })
cli({ 'reinstate', tostring(cache) })

-- Supersede, from the mirror: the entry opens in the editable checkout.
vim.api.nvim_win_set_cursor(0, { H.line_of(mirror, '^%- %[#' .. cache .. '%]') + 1, 0 })
H.code_action('^Supersede')
check('Supersede opens the entry in the memory buffer', H.wait(10000, function()
  local bufnr = vim.api.nvim_get_current_buf()
  return vim.api.nvim_buf_get_name(bufnr) == 'memory://' .. root .. '/MEMORY.md'
    and vim.api.nvim_get_current_line():find('Cache hit ratio is 0.91', 1, true) ~= nil
end), { vim.api.nvim_buf_get_name(0), vim.api.nvim_get_current_line() })

-- Edit the memory buffer and :w — the edit becomes events.
local memory = H.open_memory()
local name = vim.api.nvim_buf_get_name(memory)
check('Mnemo edit opens memory://<workspace>/MEMORY.md', name == 'memory://' .. root .. '/MEMORY.md', name)
check('the checkout is in the buffer', vim.api.nvim_buf_get_lines(memory, 0, 1, false)[1]:match('^<!%-%- mnemo checkout') ~= nil)
H.edit(memory, function(text)
  return (text:gsub('Cache hit ratio is 0%.91', 'Cache hit ratio is 0.93'):gsub('## Tasks\n', '## Tasks\n\n- low · Typed in Neovim\n', 1))
end)
vim.cmd('write')
local history = json({ 'history', tostring(cache) })
check(':w superseded the edited note', history[#history].kind == 'superseded', history)
local titles = H.notes_by_title()
check(':w created the new note as human', titles['Typed in Neovim'] and titles['Typed in Neovim'].provenance == 'human', titles)
check('the buffer is the new render, saved', not vim.bo[memory].modified and H.has(memory, 'Typed in Neovim'))
-- The language server stands for the mirror: it follows the check-in.
check('the mirror on disk has the new note', H.wait(15000, function()
  return table.concat(vim.fn.readfile(root .. '/MEMORY.md'), '\n'):find('Typed in Neovim', 1, true) ~= nil
end))

-- :checkhealth mnemo
vim.cmd('checkhealth mnemo')
local health = H.text(0)
check(':checkhealth mnemo runs without errors', health:find('OK', 1, true) ~= nil and health:find('ERROR', 1, true) == nil, health)
check(':checkhealth mnemo says the server is enabled and lenses and hints are on', health:find('the language server is enabled', 1, true) ~= nil
  and health:find('code lens on, inlay hints on', 1, true) ~= nil, health)
check(':checkhealth mnemo reads the store and the ranking', health:find('store: %d+ notes, epoch %d+') ~= nil
  and health:find('recall runs', 1, true) ~= nil, health)

-- :Mnemo recall: a picker, with what was hidden in its prompt.
local picked_recall
vim.ui.select = function(items, opts, on_choice)
  picked_recall = { items = items, prompt = opts.prompt, first = items[1] and opts.format_item(items[1]) }
  on_choice(nil)
end
from = #H.said
vim.cmd('Mnemo recall lock restarting')
local said = H.said_since(from, '^mnemo: nothing found')
check(':Mnemo recall says what it hid when nothing is left', picked_recall == nil and said and said.message:find('hidden: 1 revoked', 1, true) ~= nil, said)
vim.cmd('Mnemo recall typed neovim')
check(':Mnemo recall picks a live note', picked_recall and picked_recall.first:match('^#%d+ Typed in Neovim$') ~= nil, picked_recall)
check('the picker says what was hidden', picked_recall and picked_recall.prompt:find('hidden', 1, true) ~= nil, picked_recall)

-- :Mnemo remember over a visual selection: kind, priority, title asked; anchored; human.
local answers = { 'gotcha', 'high' }
vim.ui.select = function(_, _, on_choice) on_choice(table.remove(answers, 1)) end
H.answer('Restart only after unlock')
vim.cmd.edit(root .. '/src/lock.rs')
vim.cmd('2,3Mnemo remember')
local remembered = H.notes_by_title()['Restart only after unlock']
remembered = remembered and json({ 'show', tostring(remembered.id) })
check(':Mnemo remember records a human note anchored to the selection', remembered and remembered.provenance == 'human'
  and remembered.anchors[1].path == 'src/lock.rs' and remembered.anchors[1].start_line == 2, remembered)

-- :Mnemo history / reinstate / promote by id.
vim.cmd('Mnemo history ' .. lock)
local float_text
for _, win in ipairs(vim.api.nvim_list_wins()) do
  if vim.api.nvim_win_get_config(win).relative ~= '' then
    float_text = H.text(vim.api.nvim_win_get_buf(win))
    vim.api.nvim_win_close(win, true)
  end
end
check(':Mnemo history shows the events in a float', float_text and float_text:find('revoked', 1, true)
  and float_text:find('wrong lock order', 1, true), float_text)
from = #H.said
vim.cmd('Mnemo reinstate ' .. lock)
check(':Mnemo reinstate reinstates and says so', H.state(lock) == 'active'
  and H.said_since(from, ('^mnemo: #%d is active$'):format(lock)) ~= nil, vim.list_slice(H.said, from + 1))
vim.cmd('Mnemo promote ' .. lock)
check(':Mnemo promote makes it human', json({ 'show', tostring(lock) }).provenance == 'human', json({ 'show', tostring(lock) }))

-- :Mnemo completion
local completion = vim.fn.getcompletion('Mnemo re', 'cmdline')
check(':Mnemo completes subcommands', vim.deep_equal(completion, { 'recall', 'reinstate', 'reject', 'remember', 'revoke' }), completion)

H.finish()
