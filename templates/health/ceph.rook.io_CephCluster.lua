-- Health of a Rook ceph.rook.io/CephCluster.
--
-- Healthy only when the operator reports the cluster Ready (Connected for an
-- external cluster) for the current generation AND Ceph itself reports
-- HEALTH_OK. HEALTH_WARN is Healthy only when the platform spec sets
-- healthOptions.cephAcceptHealthWarn (small clusters live with warnings);
-- otherwise it is Progressing (warnings usually clear while PGs peer).
-- HEALTH_ERR and the operator's Failure/Error states are Degraded.
-- It runs with Argo CD's restricted Lua libraries (no string library).
local acceptHealthWarn = false -- deployctl:cephAcceptHealthWarn

local hs = {}
if obj.status == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Rook operator to report status"
  return hs
end

local function withMessage(text)
  if obj.status.message ~= nil and obj.status.message ~= "" then
    return text .. ": " .. obj.status.message
  end
  return text
end

local phase = obj.status.phase
if phase == "Failure" or obj.status.state == "Error" then
  hs.status = "Degraded"
  hs.message = withMessage("CephCluster failed")
  return hs
end

if obj.status.observedGeneration ~= nil and obj.metadata.generation ~= nil and obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the Rook operator to observe the latest spec"
  return hs
end

if phase ~= "Ready" and phase ~= "Connected" then
  hs.status = "Progressing"
  if phase == nil then
    hs.message = withMessage("CephCluster has no phase yet")
  else
    hs.message = withMessage("CephCluster is " .. phase)
  end
  return hs
end

local ceph = obj.status.ceph
if ceph == nil or ceph.health == nil or ceph.health == "" then
  hs.status = "Progressing"
  hs.message = "CephCluster is " .. phase .. ", waiting for Ceph to report its health"
  return hs
end

if ceph.health == "HEALTH_OK" then
  hs.status = "Healthy"
  hs.message = "CephCluster is " .. phase .. " and HEALTH_OK"
  return hs
end

if ceph.health == "HEALTH_WARN" then
  if acceptHealthWarn then
    hs.status = "Healthy"
    hs.message = "CephCluster is " .. phase .. " and HEALTH_WARN (accepted by healthOptions.cephAcceptHealthWarn)"
  else
    hs.status = "Progressing"
    hs.message = "CephCluster is " .. phase .. " but Ceph reports HEALTH_WARN"
  end
  return hs
end

hs.status = "Degraded"
hs.message = "CephCluster is " .. phase .. " but Ceph reports " .. ceph.health
return hs
