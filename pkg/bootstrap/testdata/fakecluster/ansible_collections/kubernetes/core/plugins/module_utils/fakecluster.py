# A fake Kubernetes cluster and Helm for pkg/bootstrap's tests. Every module
# of this stand-in collection reads and writes one JSON state file, named by
# DEPLOYCTL_FAKE_CLUSTER, and records each call in state["calls"].
#
# state["charts"][<chart>] says what installing a chart creates: crds,
# deployments, statefulsets, endpoints, and kinds whose API it serves.
# state["bad_charts"] lists "<chart>-<version>" whose workloads never become
# ready. state["workflow_phase"] is the phase a submitted Workflow reaches.
# state["objects"]["<Kind>/<namespace>/<name>"] are the other objects
# (Secrets, Workflows, Applications); a test may put some there first.
import json
import os
import sys

from ansible.module_utils.basic import _load_params


def _path():
    return os.environ["DEPLOYCTL_FAKE_CLUSTER"]


def _load():
    with open(_path()) as f:
        return json.load(f)


def _save(st):
    with open(_path(), "w") as f:
        json.dump(st, f, indent=1, sort_keys=True)


def _out(result, rc):
    print(json.dumps(result))
    sys.exit(rc)


def _release_key(ns, name):
    return ns + "/" + name


def _chart_name(ref):
    return ref.rstrip("/").split("/")[-1]


def _installed_charts(st):
    return [r["chart_name"] for r in st["releases"].values()]


def _crds(st):
    out = set()
    for c in _installed_charts(st):
        out.update(st["charts"].get(c, {}).get("crds") or [])
    return out


def _release_of(st, ns, kind, name):
    for r in st["releases"].values():
        spec = st["charts"].get(r["chart_name"], {})
        if r["namespace"] == ns and name in (spec.get(kind) or []):
            return r
    return None


def _named(name, **extra):
    d = {"metadata": {"name": name}}
    d.update(extra)
    return d


def _load_values(files, inline):
    import yaml  # PyYAML ships with Ansible

    values = {}
    for f in files or []:
        with open(f) as fh:
            values.update(yaml.safe_load(fh) or {})
    values.update(inline or {})
    return values


def helm(st, p):
    key = _release_key(p["release_namespace"], p["name"])
    if p.get("state") == "absent" or p.get("release_state") == "absent":
        st["releases"].pop(key, None)
        return {"changed": True}
    for k in ("chart_version", "atomic", "wait", "timeout"):
        if not p.get(k):
            return {"failed": True, "msg": "fake helm: %s is required by the tests" % k}
    chart = _chart_name(p["chart_ref"])
    prev = st["releases"].get(key, {})
    if chart + "-" + p["chart_version"] in (st.get("bad_charts") or []):
        # As the real helm does with --atomic --wait (seen on the e2e cluster,
        # issue 26): the workloads never get Ready, the command fails after
        # its timeout, and Helm has put the previous release back.
        verb = "UPGRADE" if prev else "INSTALLATION"
        return {"failed": True, "msg": "Failure when executing Helm command. Exited 1.\n    stdout: \n    stderr: Error: %s FAILED: "
                "release %s failed, and has been rolled back due to atomic being set: context deadline exceeded\n" % (verb, p["name"])}
    values = _load_values(p.get("values_files"), p.get("release_values"))
    rel = {
        "name": p["name"], "namespace": p["release_namespace"], "chart_name": chart,
        "chart": chart + "-" + p["chart_version"], "app_version": "v" + p["chart_version"],
        "revision": prev.get("revision", 0) + 1, "status": "deployed", "values": values,
        "updated": "fake",
    }
    st["releases"][key] = rel
    return {"changed": True, "status": rel}


def helm_info(st, p):
    rel = st["releases"].get(_release_key(p["release_namespace"], p["name"]))
    return {"changed": False, "status": rel} if rel else {"changed": False}


def helm_pull(st, p):
    if not p.get("chart_version"):
        return {"failed": True, "msg": "fake helm_pull: unpinned chart"}
    return {"changed": True}


def k8s_cluster_info(st, p):
    return {"changed": False, "version": {"server": {"kubernetes": {"gitVersion": "v1.30.0-fake"}}}}


def _selector(p):
    return dict(s.split("=", 1) for s in p.get("label_selectors") or [] if "!=" not in s and "=" in s)


def _labels(obj):
    labels = dict(obj.get("metadata", {}).get("labels") or {})
    if obj.get("kind") == "Workflow" and (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed", "Error"):
        labels["workflows.argoproj.io/completed"] = "true"
    return labels


def _matches(obj, selectors):
    """Label selectors as the API server reads them: k=v, k!=v, k in (a,b)."""
    labels = _labels(obj)
    for s in selectors or []:
        s = s.strip()
        if " in (" in s:
            k, vals = s.split(" in (", 1)
            if labels.get(k.strip()) not in [v.strip() for v in vals.rstrip(")").split(",")]:
                return False
        elif "!=" in s:
            k, v = s.split("!=", 1)
            if labels.get(k) == v:
                return False
        elif "=" in s:
            k, v = s.split("=", 1)
            if labels.get(k) != v:
                return False
        else:
            raise ValueError("fake k8s_info: selector %r not understood" % s)
    return True


def _objects(st, kind, ns, name, selectors):
    res = []
    for key, obj in sorted(st["objects"].items()):
        k, ons, oname = key.split("/", 2)
        if k != kind or (ns and ons != ns) or (name and oname != name):
            continue
        if _matches(obj, selectors):
            res.append(obj)
    return res


def k8s_info(st, p):
    kind, name, ns = p["kind"], p.get("name"), p.get("namespace")
    res = []
    if kind == "Node":
        res = [{"status": {"conditions": [{"type": "Ready", "status": "True"}]}}]
    elif kind == "Namespace":
        known = {r["namespace"] for r in st["releases"].values()}
        res = [_named(name, status={"phase": "Active"})] if name in known else []
    elif kind == "CustomResourceDefinition":
        if name in _crds(st):
            res = [_named(name, status={"conditions": [{"type": "Established", "status": "True"}]})]
    elif kind in ("Deployment", "StatefulSet", "Pod"):
        plural = {"Deployment": "deployments", "StatefulSet": "statefulsets", "Pod": "pods"}[kind]
        inst = _selector(p).get("app.kubernetes.io/instance")
        for r in st["releases"].values():
            if r["namespace"] != ns or (inst and r["name"] != inst):
                continue
            names = st["charts"].get(r["chart_name"], {}).get(plural) or ([r["name"] + "-pod"] if kind == "Pod" else [])
            for n in names:
                if name and n != name:
                    continue
                if p.get("wait") and r["chart"] in (st.get("bad_charts") or []):
                    return {"failed": True, "msg": "Failed to gather information about %s(s) even after waiting for %s seconds" % (kind, p.get("wait_timeout"))}
                res.append(_named(n))
    elif kind == "Endpoints":
        if _release_of(st, ns, "endpoints", name):
            res = [_named(name, subsets=[{"addresses": [{"ip": "10.0.0.1"}]}])]
    elif kind == "ConfigMap" and name == "argocd-cm":
        for r in st["releases"].values():
            if r["chart_name"] == "argo-cd" and r["namespace"] == ns:
                res = [_named(name, data=r["values"].get("configs", {}).get("cm", {}))]
    elif kind == "Secret":
        if _selector(p).get("sealedsecrets.bitnami.com/sealed-secrets-key") == "active":
            res = [_named("sealed-secrets-key-fake")] if any(c == "sealed-secrets" for c in _installed_charts(st)) else []
        else:
            res = _objects(st, kind, ns, name, p.get("label_selectors"))
    elif kind in ("Workflow", "Application"):
        res = _objects(st, kind, ns, name, p.get("label_selectors"))
    else:
        served = {k for c in _installed_charts(st) for k in st["charts"].get(c, {}).get("kinds") or []}
        if kind not in served:
            return {"changed": False, "api_found": False, "resources": []}
    return {"changed": False, "api_found": True, "resources": res}


def k8s(st, p):
    check = p.get("_ansible_check_mode", False)
    if p.get("src"):
        applied = st["applied"]
        if check:
            return {"changed": p["src"] not in applied}
        applied.append(p["src"])
        return {"changed": True, "result": {}}
    d = p.get("definition") or {}
    kind = d.get("kind") or p.get("kind")
    ns = p.get("namespace") or d.get("metadata", {}).get("namespace")
    if p.get("state") == "absent":
        st["objects"].pop("%s/%s/%s" % (kind, ns, p["name"]), None)
        return {"changed": True}
    meta = dict(d.get("metadata") or {})
    if p.get("generate_name"):
        n = len(st["objects"]) + 1
        meta["name"] = p["generate_name"] + "fake%d" % n
        meta["creationTimestamp"] = "2030-01-01T00:%02d:00Z" % n
    meta["namespace"] = ns
    obj = dict(d, metadata=meta)
    if kind == "Workflow":
        obj["status"] = {"phase": st.get("workflow_phase", "Running")}
    key = "%s/%s/%s" % (kind, ns, meta["name"])
    old = st["objects"].get(key)
    if old is not None and kind == "Secret":
        # A server-side apply of what is there changes nothing; one that
        # takes fields another manager owns needs force_conflicts.
        if old.get("data") == obj.get("data") and (old["metadata"].get("labels") or {}) == (meta.get("labels") or {}):
            return {"changed": False, "result": old}
        if old.get("manager") and old["manager"] != (p.get("server_side_apply") or {}).get("field_manager") \
                and not (p.get("server_side_apply") or {}).get("force_conflicts"):
            return {"failed": True, "msg": "Apply failed with 1 conflict: conflict with \"%s\"" % old["manager"]}
    if p.get("server_side_apply"):
        obj["manager"] = p["server_side_apply"]["field_manager"]
    if check:
        return {"changed": True, "result": obj}
    st["objects"][key] = obj
    return {"changed": True, "result": obj}


HANDLERS = {
    "helm": helm, "helm_info": helm_info, "helm_pull": helm_pull,
    "k8s_cluster_info": k8s_cluster_info, "k8s_info": k8s_info, "k8s": k8s,
}


def run(module):
    params = _load_params()
    st = _load()
    call = {k: v for k, v in params.items() if not k.startswith("_ansible_") or k == "_ansible_check_mode"}
    call["module"] = module
    st["calls"].append(call)
    result = HANDLERS[module](st, params)
    _save(st)
    _out(result, 1 if result.get("failed") else 0)
