-- Health of a nested argoproj.io/Application (app-of-apps).
--
-- Argo CD removed this check in 1.8, so by default a parent Application is
-- Healthy as soon as its child Application objects exist, whatever the
-- children's own health: the parent lies. This script reports the child's
-- real health instead, and treats a running or failed sync as not Healthy.
-- It runs with Argo CD's restricted Lua libraries (no string library).
local hs = {}
if obj.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Application controller to report status"
  return hs
end

local op = obj.status.operationState
local function operation(status)
  hs.status = status
  hs.message = "Sync operation " .. op.phase
  if op.message ~= nil then
    hs.message = hs.message .. ": " .. op.message
  end
  return hs
end

if op ~= nil and (op.phase == "Running" or op.phase == "Terminating") then
  return operation("Progressing")
end

-- A failed sync that a later sync repaired (Synced again) no longer counts.
local synced = obj.status.sync ~= nil and obj.status.sync.status == "Synced"
if op ~= nil and (op.phase == "Failed" or op.phase == "Error") and not synced then
  return operation("Degraded")
end

if obj.status.health == nil or obj.status.health.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Application's health"
  return hs
end

hs.status = obj.status.health.status
hs.message = obj.status.health.message
if hs.message == nil then
  hs.message = "Application is " .. hs.status
end
return hs
