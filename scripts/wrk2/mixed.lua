-- A GET with probability QKV_READ_RATIO (default 0.9), else a PUT of QKV_VALUE_SIZE bytes, on
-- keys by QKV_DIST. See common.lua.
package.path = (debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./") .. "?.lua;" .. package.path
local qkv = require("common")

local body

qkv.on_init = function()
  body = qkv.random_value(qkv.value_size)
end

function request()
  local i = qkv.next_index()
  if i == nil then
    return qkv.idle_request()
  end
  if math.random() < qkv.read_ratio then
    return wrk.format("GET", qkv.entity_path(i))
  end
  return wrk.format("PUT", qkv.entity_path(i), nil, body)
end
