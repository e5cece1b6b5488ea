-- :help mnemo, as a person reads it: the tags build without errors (on a
-- copy of doc/, so the repository gets no tags file), and the help says what
-- a person sees — unapplied text and how to discard it, the lens and hint
-- defaults and their options, and that autosave plugins check in.
local H = require('helper')
local check = H.check

local doc = H.tmp .. '/rtp/doc'
vim.fn.mkdir(doc, 'p')
vim.fn.writefile(vim.fn.readfile(H.plugin .. '/doc/mnemo.txt'), doc .. '/mnemo.txt')
vim.opt.runtimepath:prepend(H.tmp .. '/rtp')
local ok, err = pcall(vim.cmd, 'helptags ' .. doc)
check(':helptags builds the tags without errors (no duplicates)', ok, err)

local function section(tag)
  local opened = pcall(vim.cmd, 'help ' .. tag)
  if not opened then
    return nil
  end
  local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  local start = vim.api.nvim_win_get_cursor(0)[1]
  local out = {}
  for i = start, #lines do
    if i > start and lines[i]:match('^====') then
      break
    end
    table.insert(out, lines[i])
  end
  vim.cmd('helpclose')
  return table.concat(out, '\n')
end

local function says(tag, needles)
  local text = section(tag)
  local missing = {}
  for _, needle in ipairs(needles) do
    if not text or not text:find(needle, 1, true) then
      table.insert(missing, needle)
    end
  end
  check((':help %s says: %s'):format(tag, table.concat(needles, ', ')), #missing == 0, { missing = missing, text = text })
end

says('mnemo-intro', { 'mnemo lsp', 'memory://' })
says('mnemo-setup', { 'vim.lsp.enable', 'No `setup()` call', '<!-- mnemo mirror' })
says('mnemo-options', { 'code_lens', 'inlay_hints', 'binary', 'store_path' })
says('mnemo-display', { 'Inlay hints', 'Code lenses', 'inlay_hints = false', 'code_lens = false', 'Without any configuration' })
says('mnemo-unapplied', { "'modified'", 'E37', ':e!', ':Mnemo discard', 'never replace' })
says('mnemo-buffer', { 'Keep mine', 'Take theirs', 'conflict' })
says('mnemo-autosave', { 'autosave', 'check-in', 'memory://', 'Exclude' })
says('mnemo-anchors', { 'lens', 'hover', 'Re-anchor' })
says(':Mnemo', { 'discard', 'mirror', '[memory_export] path' })

H.finish()
