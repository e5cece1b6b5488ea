-- Code lens and inlay hints appear without any wiring by the person: hints
-- (provenance · age) after each entry's id in the memory buffer, a lens
-- "1 note: #N" over the anchored lines of a source file, both on screen.
-- With vim.g.mnemo.code_lens = false / inlay_hints = false they stay off.
local H = require('helper')
local check = H.check

local root = H.workspace()
local id = H.remember({ '--kind', 'gotcha', '--title', 'Release the lock before restarting', '--anchor', 'src/lock.rs:2-3' })
H.cli({ 'export', '--enable' })
vim.fn.writefile({ 'fn other() {}', 'other();' }, root .. '/src/other.rs')
H.remember({ '--kind', 'finding', '--title', 'Other is called once', '--anchor', 'src/other.rs:1-2' })
H.start({ binary = H.binary, debounce_ms = 20 })

-- The memory buffer: inlay hints on, and fetched.
local memory = H.open_memory()
check('inlay hints are enabled on the memory buffer', H.wait(5000, function()
  return vim.lsp.inlay_hint.is_enabled({ bufnr = memory })
end))
local function hints(bufnr)
  local labels = {}
  for _, h in ipairs(vim.lsp.inlay_hint.get({ bufnr = bufnr })) do
    local label = h.inlay_hint.label
    if type(label) == 'table' then
      label = table.concat(vim.tbl_map(function(part) return part.value end, label))
    end
    table.insert(labels, { line = h.inlay_hint.position.line, label = label })
  end
  return labels
end
local entry_line = H.line_of(memory, '^%- %[#' .. id .. '%]')
local hint
check('an inlay hint sits on the entry line', H.wait(10000, function()
  for _, h in ipairs(hints(memory)) do
    if h.line == entry_line then hint = h.label return true end
  end
end), hints(memory))
check('the hint is on screen, in the entry\'s row', hint and H.wait(5000, function()
  local _, row = H.screen_row('Release the lock before restarting')
  return row and row:find(vim.trim(hint), 1, true) ~= nil
end), { hint = hint, screen = H.screen() })

-- The anchored source file: a lens on the first anchored line, on screen.
vim.cmd.edit(root .. '/src/lock.rs')
local source = vim.api.nvim_get_current_buf()
H.client(source)
local function lenses(bufnr)
  return vim.tbl_map(function(l)
    return { line = l.range.start.line, title = l.command and l.command.title }
  end, vim.lsp.codelens.get(bufnr))
end
check('a code lens "1 note: #N" is on the anchored lines', H.wait(10000, function()
  local l = lenses(source)[1]
  return l and l.line == 1 and l.title == ('1 note: #%d'):format(id)
end), lenses(source))
check('inlay hints are not switched on for source files (other servers\' hints stay as they were)',
  not vim.lsp.inlay_hint.is_enabled({ bufnr = source }))
check('the lens is on screen, on the row of the anchored line', H.wait(5000, function()
  local _, row = H.screen_row('let guard = lock();')
  return row and row:find(('1 note: #%d'):format(id), 1, true) ~= nil
end), H.screen())

-- Running the lens opens the note's entry in the mirror.
vim.api.nvim_win_set_cursor(0, { 2, 0 })
vim.lsp.codelens.run()
check('running the lens opens the note in MEMORY.md at its entry', H.wait(10000, function()
  local bufnr = vim.api.nvim_get_current_buf()
  return vim.api.nvim_buf_get_name(bufnr) == root .. '/MEMORY.md'
    and vim.api.nvim_win_get_cursor(0)[1] - 1 == H.line_of(bufnr, '^%- %[#' .. id .. '%]')
end), { vim.api.nvim_buf_get_name(0), vim.api.nvim_win_get_cursor(0) })
local mirror = vim.api.nvim_get_current_buf()
check('the mirror gets inlay hints too', H.wait(10000, function() return #hints(mirror) > 0 end), hints(mirror))

-- Options off: a memory buffer and an anchored file attached afterwards get neither.
vim.g.mnemo = { binary = H.binary, debounce_ms = 20, code_lens = false, inlay_hints = false }
vim.cmd.edit(root .. '/src/other.rs')
local other = vim.api.nvim_get_current_buf()
H.client(other)
H.wait(1500, function() return #vim.lsp.codelens.get(other) > 0 end)
check('code_lens = false: no lens on an anchored file', #vim.lsp.codelens.get(other) == 0, vim.lsp.codelens.get(other))
vim.cmd('bwipeout! ' .. memory)
memory = H.open_memory()
check('inlay_hints = false: hints stay off on the memory buffer', not vim.lsp.inlay_hint.is_enabled({ bufnr = memory }))

H.finish()
