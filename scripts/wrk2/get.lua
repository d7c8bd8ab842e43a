-- GET /v0/entity?id=KEY[&replicas=..]; keys by QKV_DIST over QKV_KEYS (prefill them first with
-- scripts/prefill.sh and the same QKV_KEYS/QKV_KEY_PREFIX, or expect 404s). See common.lua.
package.path = (debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./") .. "?.lua;" .. package.path
local qkv = require("common")

function request()
  local i = qkv.next_index()
  if i == nil then
    return qkv.idle_request()
  end
  return wrk.format("GET", qkv.entity_path(i))
end
