-- An example of a spec.healthCustomizations entry: a kind that reports a
-- Ready condition, with reason Failed when it gave up.
local hs = {}
if obj.status == nil or obj.status.conditions == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Widget controller"
  return hs
end
for _, c in ipairs(obj.status.conditions) do
  if c.type == "Ready" then
    if c.status == "True" then
      hs.status = "Healthy"
    elseif c.reason == "Failed" then
      hs.status = "Degraded"
    else
      hs.status = "Progressing"
    end
    hs.message = c.message
    return hs
  end
end
hs.status = "Progressing"
hs.message = "Widget has no Ready condition yet"
return hs
