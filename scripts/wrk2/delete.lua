-- DELETE /v0/entity?id=KEY[&replicas=..]; keys by QKV_DIST (deleting an absent key is a 202
-- too). See common.lua.
package.path = (debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./") .. "?.lua;" .. package.path
local qkv = require("common")

function request()
  local i = qkv.next_index()
  if i == nil then
    return qkv.idle_request()
  end
  return wrk.format("DELETE", qkv.entity_path(i))
end
