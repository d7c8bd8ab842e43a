-- GET /v0/entities?start=KEY(i)&end=KEY(i+QKV_RANGE_SIZE): streams up to QKV_RANGE_SIZE
-- records; start keys by QKV_DIST. See common.lua. Asks for the chunked records
-- (application/octet-stream), the format earlier runs measured, not the NDJSON default.
package.path = (debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./") .. "?.lua;" .. package.path
local qkv = require("common")

function request()
  local i = qkv.next_index()
  if i == nil then
    return qkv.idle_request()
  end
  return wrk.format("GET", "/v0/entities?start=" .. qkv.key(i) .. "&end=" .. qkv.key(i + qkv.range_size),
    { ["Accept"] = "application/octet-stream" })
end
