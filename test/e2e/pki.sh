#!/usr/bin/env bash
# Create the cluster PKI under $STATE/pki (once): a CA, serving certs for the
# apiserver, kubelet and argocd-server, client certs, the service-account key
# pair, and kubeconfigs. Keys never leave the state dir.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

P=$STATE/pki
[[ -f $P/admin.kubeconfig ]] && exit 0
mkdir -p "$P"; chmod 700 "$P"; cd "$P"

openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
openssl req -x509 -new -key ca.key -out ca.crt -days 3650 -subj "/CN=deployctl-e2e-ca" 2>/dev/null

cert() { # NAME CN O SAN
  local n=$1 cn=$2 o=$3 san=$4
  openssl ecparam -name prime256v1 -genkey -noout -out "$n.key" 2>/dev/null
  openssl req -new -key "$n.key" -out "$n.csr" -subj "/CN=$cn${o:+/O=$o}" 2>/dev/null
  {
    echo "basicConstraints=CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=serverAuth,clientAuth"
    [[ -n $san ]] && echo "subjectAltName=$san"
  } >"$n.ext"
  openssl x509 -req -in "$n.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$n.crt" -days 3650 -extfile "$n.ext" 2>/dev/null
  rm -f "$n.csr" "$n.ext"
}
svc_dns() { echo "DNS:$1,DNS:$1.$2,DNS:$1.$2.svc,DNS:$1.$2.svc.cluster.local"; }

cert apiserver kube-apiserver "" "IP:$NODE_IP,IP:$KUBERNETES_SVC_IP,IP:127.0.0.1,DNS:localhost,$(svc_dns kubernetes default)"
cert admin e2e-admin system:masters ""
cert kubelet "system:node:$NODE_NAME" system:nodes "IP:$NODE_IP,DNS:$NODE_NAME"
cert argocd-server argocd-server "" "IP:$NODE_IP,$(svc_dns argocd-server argocd)"
openssl genrsa -out sa.key 2048 2>/dev/null
openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null

kubeconfig() { # FILE USER CERT
  cat >"$1" <<KC
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: $APISERVER
    certificate-authority-data: $(base64 -w0 ca.crt)
users:
- name: $2
  user:
    client-certificate-data: $(base64 -w0 "$3.crt")
    client-key-data: $(base64 -w0 "$3.key")
contexts:
- name: e2e
  context: {cluster: e2e, user: $2}
current-context: e2e
KC
  chmod 600 "$1"
}
kubeconfig kubelet.kubeconfig "system:node:$NODE_NAME" kubelet
kubeconfig admin.kubeconfig e2e-admin admin
log "pki created in $P"
