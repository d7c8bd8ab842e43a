#!/usr/bin/env bash
# Makes a certificate authority and certificates for trying QuorumKV with TLS (docs/security.md):
# PEM files that Spring Boot SSL bundles read. For a laptop, a test run or a first cluster; in
# production use your own CA (or cert-manager on Kubernetes: docs/kubernetes.md).
#
#   scripts/dev-certs.sh ca CA-DIR                    CA-DIR/ca.crt and CA-DIR/ca.key (the CA, 1 year)
#   scripts/dev-certs.sh node CA-DIR DIR NAME CLUSTER-ID [SAN...]
#                                                     DIR/NAME.crt, DIR/NAME.key and DIR/ca.crt: a node
#                                                     certificate for servers and clients (90 days) whose
#                                                     node identity is the subject alternative name
#                                                     URI:spiffe://CLUSTER-ID/node/NAME (CLUSTER-ID is
#                                                     the nodes' quorumkv.cluster.id); SAN are the hosts
#                                                     callers check (default: IP:127.0.0.1 DNS:localhost),
#                                                     e.g. DNS:*.quorumkv.default.svc.cluster.local
#   scripts/dev-certs.sh client CA-DIR DIR COMMON-NAME
#                                                     DIR/COMMON-NAME.crt/.key and DIR/ca.crt: a client
#                                                     certificate, no node (map COMMON-NAME with
#                                                     quorumkv.security.certificates)
#
# The CA's key stays in CA-DIR: DIR, the folder the nodes (or clients) are pointed at, gets
# the CA's certificate only, and must be another folder. Keys are EC P-256, written with
# mode 600. Needs openssl.
set -euo pipefail

die() { echo "dev-certs.sh: $*" >&2; exit 1; }
command -v openssl >/dev/null || die "needs openssl"
[ $# -ge 2 ] || { sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }
kind="$1"
ca="$2"
shift 2
umask 077

# out DIR: the folder certificates are issued into, never the CA's own.
out() {
  [ -f "$ca/ca.crt" ] && [ -f "$ca/ca.key" ] || die "no CA in $ca: run scripts/dev-certs.sh ca $ca first"
  mkdir -p "$1"
  [ "$(cd "$1" && pwd -P)" != "$(cd "$ca" && pwd -P)" ] ||
    die "$1 is the CA's folder: issue into another one, so that ca.key never lands where nodes read"
  [ ! -e "$1/ca.key" ] || die "$1 holds a ca.key: keep the CA's key out of the folder nodes are pointed at"
  cp "$ca/ca.crt" "$1/ca.crt"
  chmod 644 "$1/ca.crt"
}

issue() { # issue DIR NAME SUBJECT EXTENSIONS
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1/$2.key" \
    -subj "$3" -out "$1/$2.csr" 2>/dev/null
  openssl x509 -req -in "$1/$2.csr" -CA "$ca/ca.crt" -CAkey "$ca/ca.key" -CAcreateserial \
    -days 90 -out "$1/$2.crt" -extfile <(printf '%b' "$4") 2>/dev/null
  rm -f "$1/$2.csr"
  echo "$1/$2.crt and $1/$2.key, issued by $ca/ca.crt (copied to $1/ca.crt)"
}

case "$kind" in
  ca)
    mkdir -p "$ca"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 365 \
      -subj "/CN=QuorumKV CA" -keyout "$ca/ca.key" -out "$ca/ca.crt" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    chmod 644 "$ca/ca.crt"
    echo "$ca/ca.crt (trust this) and $ca/ca.key (keep it secret, away from the nodes)"
    ;;
  node)
    [ $# -ge 3 ] || die "node needs CA-DIR DIR NAME CLUSTER-ID"
    dir="$1" name="$2" cluster="$3"
    shift 3
    [[ "$name" =~ ^[A-Za-z0-9._-]{1,128}$ ]] || die "NAME must be 1 to 128 letters, digits, '.', '_' or '-'"
    [[ "$cluster" =~ ^[A-Za-z0-9._-]{1,128}$ ]] || die "CLUSTER-ID must be 1 to 128 letters, digits, '.', '_' or '-'"
    [ $# -ge 1 ] || set -- IP:127.0.0.1 DNS:localhost
    sans="$(IFS=,; echo "URI:spiffe://$cluster/node/$name,$*")"
    out "$dir"
    issue "$dir" "$name" "/CN=quorumkv-node" "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=$sans\n"
    ;;
  client)
    [ $# -eq 2 ] || die "client needs CA-DIR DIR COMMON-NAME"
    out "$1"
    issue "$1" "$2" "/CN=$2" "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n"
    ;;
  *) die "unknown kind: $kind (ca, node, client)" ;;
esac
