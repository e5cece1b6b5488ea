-- A project that reviews what agents write: the memory buffer shows each
-- proposal with Accept and Reject… lenses (on screen) and a count of the
-- waiting ones; the person runs Accept on one (it goes live, endorsed by
-- them), Reject on the other through the code action menu, answering why
-- (it is revoked with that reason), and `:Mnemo accept` says what is not a
-- proposal. The store (CLI) and the buffer agree after each.
local H = require('helper')
local check = H.check

local root = H.workspace()
vim.fn.mkdir(root .. '/.mnemo', 'p')
vim.fn.writefile({ '[review]', 'agent = "propose"' }, root .. '/.mnemo/config.toml')
local lock = H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting' })
local slow = H.remember({ '--kind', 'finding', '--title', 'The build is slow on Tuesdays' })
local utc = H.remember({ '--kind', 'decision', '--title', 'Store dates in UTC', '--as-human' })
check('an agent\'s notes are proposals, a person\'s is live',
  H.state(lock) == 'proposed' and H.state(slow) == 'proposed' and H.state(utc) == 'active')
H.start({ binary = H.binary, debounce_ms = 20 })

local memory = H.open_memory()
check('the buffer marks both proposals', H.has(memory, 'PROPOSED 2026-08-04 · Release the lock')
  and H.has(memory, 'PROPOSED 2026-08-04 · The build is slow'), H.text(memory))
local function lenses()
  return vim.tbl_map(function(l)
    return { line = l.range.start.line, title = l.command and l.command.title }
  end, vim.lsp.codelens.get(memory))
end
local lock_line = H.line_of(memory, '^%- %[#' .. lock .. '%]')
check('Accept and Reject lenses sit on the proposal\'s line', H.wait(10000, function()
  local found = {}
  for _, l in ipairs(lenses()) do
    if l.line == lock_line then table.insert(found, l.title) end
  end
  return vim.deep_equal(found, { 'Accept #' .. lock, 'Reject #' .. lock .. '…' })
end), lenses())
check('the lenses are on screen', H.wait(5000, function()
  return table.concat(H.screen(), '\n'):find('Accept #' .. lock, 1, true) ~= nil
end), H.screen())
check('the waiting proposals are counted', H.wait(5000, function()
  return #H.diagnostics(memory, '^2 proposals wait for review') == 1
end), vim.diagnostic.get(memory))

-- Accept, from the lens on the entry's line.
vim.api.nvim_win_set_cursor(0, { lock_line + 1, 0 })
local select = vim.ui.select
vim.ui.select = function(items, opts, on_choice)
  vim.ui.select = select
  for _, item in ipairs(items) do
    local title = opts.format_item and opts.format_item(item) or (item.command and item.command.title) or item.title
    if title == 'Accept #' .. lock then return on_choice(item) end
  end
  on_choice(nil)
end
vim.lsp.codelens.run()
vim.ui.select = select
check('Accept makes it live, endorsed by the person', H.wait(10000, function()
  local note = H.json({ 'show', tostring(lock) })
  return note.state == 'active' and note.provenance == 'human'
end), H.json({ 'show', tostring(lock) }))
check('the buffer follows: no marker on the accepted entry', H.wait(10000, function()
  return H.has(memory, '· medium · Release the lock before restarting') and not H.has(memory, 'PROPOSED 2026-08-04 · Release')
end), H.text(memory))

-- Reject, from the code action menu, with a reason.
local slow_line = H.line_of(memory, '^%- %[#' .. slow .. '%]')
vim.api.nvim_win_set_cursor(0, { slow_line + 1, 0 })
local asked = H.answer('not a finding, a feeling')
local offered, picked = H.code_action('^Reject #' .. slow)
check('the entry offers Accept and Reject…', picked and vim.tbl_contains(offered, 'Accept #' .. slow), offered)
check('Reject asks why', H.wait(5000, function() return asked() == ('Reject #%d, because: '):format(slow) end), asked())
check('Reject revokes it with that reason', H.wait(10000, function()
  local note = H.json({ 'show', tostring(slow) })
  return note.state == 'revoked' and note.state_reason == 'not a finding, a feeling'
end), H.json({ 'show', tostring(slow) }))
check('nothing is left to review', H.wait(10000, function()
  return #H.diagnostics(memory, 'proposal') == 0 and not H.has(memory, 'PROPOSED')
end), vim.diagnostic.get(memory))

-- :Mnemo accept on a note that is not a proposal says so.
local from = #H.said
pcall(vim.cmd, 'Mnemo accept ' .. utc)
check(':Mnemo accept on a live note says it is not a proposal', H.wait(5000, function()
  return H.said_since(from, 'only a proposed note can be accepted')
end), H.said)

H.finish()
