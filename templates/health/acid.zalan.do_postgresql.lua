-- Health of a Zalando postgres-operator acid.zalan.do/postgresql.
--
-- The operator's only status field is status.PostgresClusterStatus:
-- "" (unknown), Creating, Updating, Running, CreateFailed, UpdateFailed,
-- SyncFailed, Invalid. Running is Healthy; Creating, Updating and no status
-- yet are Progressing; every failure state is Degraded.
--
-- The status carries no replica counts, so replica readiness is not visible
-- here: the operator's StatefulSet (named like the cluster) is where
-- replicas are counted. Declare a resource health check on it in the
-- platform spec (healthChecks: resource: {group: apps, kind: StatefulSet,
-- name: <cluster>}) to gate on every replica being ready.
-- It runs with Argo CD's restricted Lua libraries (no string library).
local hs = {}
if obj.status == nil or obj.status.PostgresClusterStatus == nil or obj.status.PostgresClusterStatus == "" then
  hs.status = "Progressing"
  hs.message = "Waiting for the postgres operator to report status"
  return hs
end

local state = obj.status.PostgresClusterStatus
if state == "Running" then
  hs.status = "Healthy"
  hs.message = "Postgres cluster is Running"
  return hs
end

if state == "Creating" or state == "Updating" then
  hs.status = "Progressing"
  hs.message = "Postgres cluster is " .. state
  return hs
end

hs.status = "Degraded"
hs.message = "Postgres cluster is " .. state
return hs
