-- PUT /v0/entity?id=KEY[&replicas=..] with a QKV_VALUE_SIZE-byte body; keys by QKV_DIST.
-- QKV_DIST=sequential writes each key of the key space once (the prefill, scripts/prefill.sh).
-- Settings: see common.lua.
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
  return wrk.format("PUT", qkv.entity_path(i), nil, body)
end
