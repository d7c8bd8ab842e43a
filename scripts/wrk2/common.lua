-- Shared code of the QuorumKV wrk2/wrk scripts (put.lua, get.lua, delete.lua, mixed.lua,
-- range.lua). Works with wrk2 and wrk: both run one Lua state per thread for
-- init/request/response, and a main state for setup/done.
--
-- Settings (environment variables):
--   QKV_KEYS          key space size (default 10000); keys are 0 .. QKV_KEYS-1
--   QKV_KEY_PREFIX    key prefix (default "k", URL-safe characters); key i is PREFIX .. i
--                     zero-padded to 10 digits
--   QKV_VALUE_SIZE    PUT body size in bytes (default 100)
--   QKV_DIST          uniform | zipf | sequential (default uniform)
--   QKV_ZIPF_S        zipf exponent s > 0 (default 0.99); key 0 is the hottest
--   QKV_SEQ_START     first key of sequential mode (default 0); sequential mode walks the key
--                     space once in order, then sends only GET /v0/status; done() prints
--                     issued=<keys sent>. Threads interleave: set QKV_THREADS to wrk's -t
--                     (default 1, and one thread walks exactly in order)
--   QKV_REPLICAS      ACK/FROM, added as &replicas=ACK/FROM (default: none, the server's default)
--   QKV_READ_RATIO    mixed.lua: share of GETs, 0..1 (default 0.9)
--   QKV_RANGE_SIZE    range.lua: keys per range, start inclusive, end exclusive (default 100)
--   QKV_SEED          random seed (default 42); thread n uses QKV_SEED + n
--   QKV_PACE_RATE     plain wrk only: cap the closed loop near this many requests/s in total,
--                     with QKV_PACE_CONNECTIONS set to wrk's -c (see delay() below)
--   QKV_COUNT_STATUS  1 to count answers by status (costs throughput: wrk then parses every
--                     response in Lua); SUMMARY then has s2xx s4xx s404 s5xx s503 s504
--   QKV_LATENCY_OUT   wrk2 only: a file done() writes every timed request's latency to (µs,
--                     ascending, one per line; from wrk2's histogram, 3 significant digits),
--                     so that the runs of several wrk2 processes merge into one distribution
--   QKV_TARGETS       HOST:PORT[,HOST:PORT...]: spread the load over these nodes, thread n
--                     connecting to target n mod count (give wrk's -t as a multiple of the
--                     count; -c and wrk2's -R are split evenly over the threads). Default:
--                     every thread connects to the URL's host. The URL still names the Host
--                     header. Clients of a cluster send to any node (DESIGN §5)
--
-- done() prints one last line:
--   SUMMARY requests=.. duration_s=.. rps=.. p50_ms=.. p75_ms=.. p90_ms=.. p99_ms=.. p999_ms=..
--           p9999_ms=.. max_ms=.. non2xx=.. sock_errors=.. connect=.. read=.. write=.. timeout=..
--           [issued=.. [tail_s=..]] [s2xx=.. ...]
local M = {}

local function env_number(name, default)
  local text = os.getenv(name)
  if text == nil or text == "" then
    return default
  end
  local value = tonumber(text)
  if value == nil then
    error(name .. " must be a number, not '" .. text .. "'")
  end
  return value
end

local function env_string(name, default)
  local text = os.getenv(name)
  if text == nil or text == "" then
    return default
  end
  return text
end

M.keys = math.floor(env_number("QKV_KEYS", 10000))
M.prefix = env_string("QKV_KEY_PREFIX", "k")
M.value_size = math.floor(env_number("QKV_VALUE_SIZE", 100))
M.dist = env_string("QKV_DIST", "uniform")
M.zipf_s = env_number("QKV_ZIPF_S", 0.99)
M.seq_start = math.floor(env_number("QKV_SEQ_START", 0))
M.read_ratio = env_number("QKV_READ_RATIO", 0.9)
M.range_size = math.floor(env_number("QKV_RANGE_SIZE", 100))
M.seed = math.floor(env_number("QKV_SEED", 42))
M.count_status = env_string("QKV_COUNT_STATUS", "0") == "1"
M.stride = math.floor(env_number("QKV_THREADS", 1))
-- Pacing for plain wrk (never set it with wrk2): each of QKV_PACE_CONNECTIONS connections
-- waits CONNECTIONS/RATE seconds before each request, which caps the rate near QKV_PACE_RATE
-- (below it by the latency): a gentle closed loop, not wrk2's constant rate.
local pace_rate = env_number("QKV_PACE_RATE", 0)
local pace_connections = env_number("QKV_PACE_CONNECTIONS", 1)
M.pace_ms = (pace_rate > 0) and math.floor(1000 * pace_connections / pace_rate) or 0
local replicas = env_string("QKV_REPLICAS", "")
local latency_out = env_string("QKV_LATENCY_OUT", "")

if M.keys < 1 then error("QKV_KEYS must be at least 1") end
-- The prefix goes into URLs as it is.
if not M.prefix:match("^[%w._~-]*$") then
  error("QKV_KEY_PREFIX may hold letters, digits and . _ ~ - only, not '" .. M.prefix .. "'")
end
if M.value_size < 0 then error("QKV_VALUE_SIZE must not be negative") end
if M.dist ~= "uniform" and M.dist ~= "zipf" and M.dist ~= "sequential" then
  error("QKV_DIST must be uniform, zipf or sequential, not '" .. M.dist .. "'")
end
if M.dist == "zipf" and M.zipf_s <= 0 then error("QKV_ZIPF_S must be positive") end
if M.read_ratio < 0 or M.read_ratio > 1 then error("QKV_READ_RATIO must be between 0 and 1") end
if replicas ~= "" and not replicas:match("^%d+/%d+$") then
  error("QKV_REPLICAS must look like 2/3, not '" .. replicas .. "'")
end
M.replicas_param = (replicas ~= "") and ("&replicas=" .. replicas) or ""

M.targets = {}
for target in string.gmatch(env_string("QKV_TARGETS", ""), "[^,]+") do
  local host, port = target:match("^([%w.-]+):(%d+)$")
  if host == nil then
    error("QKV_TARGETS must look like 127.0.0.1:8081,127.0.0.1:8082, not '" .. target .. "'")
  end
  table.insert(M.targets, { host = host, port = port })
end

-- Key i as the server sees it: zero-padded so that every script and the prefill agree
-- whatever QKV_KEYS is, and so that key order is numeric order (range scans).
function M.key(i)
  return M.prefix .. string.format("%010d", i)
end

-- Zipfian sampler: precomputed CDF over ranks 1..keys, then a binary search per draw.
-- P(rank k) = k^-s / H(keys, s). Exact for any s > 0 (Gray et al.'s closed form needs s < 1);
-- one double per key per thread.
local zipf_cdf = nil

local function build_zipf_cdf()
  local cdf = {}
  local sum = 0
  for k = 1, M.keys do
    sum = sum + k ^ (-M.zipf_s)
    cdf[k] = sum
  end
  for k = 1, M.keys do
    cdf[k] = cdf[k] / sum
  end
  cdf[M.keys] = 1.0
  return cdf
end

local function zipf_index()
  local u = math.random()
  local lo, hi = 1, M.keys
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if zipf_cdf[mid] < u then
      lo = mid + 1
    else
      hi = mid
    end
  end
  return lo - 1
end

local seq_next = 0
local verified = false
issued = 0

-- The next key index, or nil when a sequential walk is over.
function M.next_index()
  if M.dist == "uniform" then
    return math.random(0, M.keys - 1)
  elseif M.dist == "zipf" then
    return zipf_index()
  end
  if seq_next >= M.keys then
    walk_done_at = walk_done_at or os.time()
    return nil
  end
  -- wrk calls request() once in thread 0 before the run to check the request
  -- (script_verify_request) and drops the result: the first key must not be used up then.
  -- Where a fork makes no such call, the key is just written twice.
  if not verified then
    verified = true
    if (thread_id or 0) == 0 then
      return seq_next
    end
  end
  local i = seq_next
  seq_next = seq_next + M.stride
  issued = issued + 1
  return i
end

function M.entity_path(i)
  return "/v0/entity?id=" .. M.key(i) .. M.replicas_param
end

-- A request that costs the server almost nothing, sent once a sequential walk is over.
function M.idle_request()
  return wrk.format("GET", "/v0/status")
end

function M.random_value(size)
  local chars = {}
  for n = 1, size do
    chars[n] = string.char(97 + math.random(0, 25))
  end
  return table.concat(chars)
end

-- wrk callbacks shared by every script ------------------------------------------------------

local threads = {}

-- Runs in wrk's main Lua state, once per thread, before that thread's init().
-- With QKV_TARGETS, thread n connects to target n mod count.
function setup(thread)
  thread:set("thread_id", #threads)
  if #M.targets > 0 then
    local target = M.targets[(#threads % #M.targets) + 1]
    local addrs = wrk.lookup(target.host, target.port)
    if addrs == nil or #addrs == 0 then
      error("QKV_TARGETS: cannot resolve " .. target.host .. ":" .. target.port)
    end
    thread.addr = addrs[1]
  end
  table.insert(threads, thread)
end

function init(args)
  local id = thread_id or 0
  math.randomseed(M.seed + id)
  -- Thread n of QKV_THREADS walks keys start+n, start+n+QKV_THREADS, ...
  seq_next = M.seq_start + id
  if M.dist == "zipf" then
    zipf_cdf = build_zipf_cdf()
  end
  if M.on_init then
    M.on_init()
  end
end

-- wrk's delay(): milliseconds a connection waits before its next request (wrk2 keeps its
-- own constant-rate schedule). Once a sequential walk is over, wait 50 ms between the status
-- requests instead of spinning on them; with QKV_PACE_RATE, pace the closed loop.
if M.dist == "sequential" or M.pace_ms > 0 then
  function delay()
    if walk_done_at ~= nil then
      return 50
    end
    return M.pace_ms
  end
end

s2xx, s4xx, s404, s5xx, s503, s504, sother = 0, 0, 0, 0, 0, 0, 0

if M.count_status then
  function response(status, headers, body)
    if status >= 200 and status < 300 then
      s2xx = s2xx + 1
    elseif status == 404 then
      s404 = s404 + 1
      s4xx = s4xx + 1
    elseif status >= 400 and status < 500 then
      s4xx = s4xx + 1
    elseif status == 503 then
      s503 = s503 + 1
      s5xx = s5xx + 1
    elseif status == 504 then
      s504 = s504 + 1
      s5xx = s5xx + 1
    elseif status >= 500 then
      s5xx = s5xx + 1
    else
      sother = sother + 1
    end
  end
end

local function ms(us)
  return string.format("%.3f", us / 1000.0)
end

function done(summary, latency, requests)
  local e = summary.errors
  local seconds = summary.duration / 1e6
  local parts = {
    "SUMMARY",
    "requests=" .. summary.requests,
    string.format("duration_s=%.2f", seconds),
    string.format("rps=%.0f", (seconds > 0) and summary.requests / seconds or 0),
    "p50_ms=" .. ms(latency:percentile(50)),
    "p75_ms=" .. ms(latency:percentile(75)),
    "p90_ms=" .. ms(latency:percentile(90)),
    "p99_ms=" .. ms(latency:percentile(99)),
    "p999_ms=" .. ms(latency:percentile(99.9)),
    "p9999_ms=" .. ms(latency:percentile(99.99)),
    "max_ms=" .. ms(latency.max),
    "non2xx=" .. e.status,
    "sock_errors=" .. (e.connect + e.read + e.write + e.timeout),
    "connect=" .. e.connect,
    "read=" .. e.read,
    "write=" .. e.write,
    "timeout=" .. e.timeout,
  }
  if M.dist == "sequential" then
    if #threads ~= M.stride then
      io.write("WARNING: QKV_THREADS=" .. M.stride .. " but wrk ran " .. #threads .. " threads\n")
    end
    local total = 0
    for _, t in ipairs(threads) do
      total = total + (t:get("issued") or 0)
    end
    table.insert(parts, "issued=" .. total)
    -- Seconds between the end of the walk and the end of the run (1 s resolution), when the
    -- walk ended: scripts/prefill.sh knows from it that no PUT was cut off.
    local ended = nil
    for _, t in ipairs(threads) do
      local at = t:get("walk_done_at")
      if at ~= nil and (ended == nil or at > ended) then
        ended = at
      end
    end
    if ended ~= nil then
      table.insert(parts, "tail_s=" .. (os.time() - ended))
    end
  end
  if M.count_status then
    for _, name in ipairs({ "s2xx", "s4xx", "s404", "s5xx", "s503", "s504", "sother" }) do
      local total = 0
      for _, t in ipairs(threads) do
        total = total + (t:get(name) or 0)
      end
      table.insert(parts, name .. "=" .. total)
    end
  end
  io.write(table.concat(parts, " ") .. "\n")
  if latency_out ~= "" then
    -- latency[i] is the value at the i-th of #latency requests (wrk2: its histogram's value
    -- at percentile 100 * i / #latency).
    local file = assert(io.open(latency_out, "w"))
    for i = 1, #latency do
      file:write(string.format("%d\n", latency[i]))
    end
    file:close()
  end
end

return M
