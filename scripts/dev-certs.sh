#!/usr/bin/env bash
# Makes a certificate authority and certificates for trying QuorumKV with TLS (docs/security.md):
# PEM files that Spring Boot SSL bundles read. For a laptop, a test run or a first cluster; in
# production use your own CA (or cert-manager on Kubernetes: docs/kubernetes.md).
#
#   scripts/dev-certs.sh ca DIR                       DIR/ca.crt, DIR/ca.key (the CA, 1 year)
#   scripts/dev-certs.sh node DIR NAME [SAN...]       DIR/NAME.crt, DIR/NAME.key: a node certificate
#                                                     for servers and clients (90 days); SAN is
#                                                     IP:127.0.0.1 (default: IP:127.0.0.1 DNS:localhost)
#                                                     or DNS:*.quorumkv.default.svc.cluster.local
#   scripts/dev-certs.sh client DIR COMMON-NAME       DIR/COMMON-NAME.crt/.key: a client certificate
#                                                     (map COMMON-NAME with quorumkv.security.certificates)
#
# Keys are EC P-256, written with mode 600. Needs openssl.
set -euo pipefail

die() { echo "dev-certs.sh: $*" >&2; exit 1; }
command -v openssl >/dev/null || die "needs openssl"
[ $# -ge 2 ] || { sed -n '2,/^set -e/{/^set -e/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }
kind="$1"
dir="$2"
shift 2
mkdir -p "$dir"
umask 077

issue() { # issue NAME SUBJECT EXTENSIONS
  [ -f "$dir/ca.crt" ] && [ -f "$dir/ca.key" ] || die "no CA in $dir: run scripts/dev-certs.sh ca $dir first"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$dir/$1.key" \
    -subj "$2" -out "$dir/$1.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$1.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -days 90 -out "$dir/$1.crt" -extfile <(printf '%b' "$3") 2>/dev/null
  rm -f "$dir/$1.csr"
  echo "$dir/$1.crt and $dir/$1.key, issued by $dir/ca.crt"
}

case "$kind" in
  ca)
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 365 \
      -subj "/CN=QuorumKV CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
    chmod 644 "$dir/ca.crt"
    echo "$dir/ca.crt (trust this) and $dir/ca.key (keep it secret)"
    ;;
  node)
    [ $# -ge 1 ] || die "node needs a NAME"
    name="$1"
    shift
    [ $# -ge 1 ] || set -- IP:127.0.0.1 DNS:localhost
    sans="$(IFS=,; echo "$*")"
    issue "$name" "/CN=quorumkv-node" "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=$sans\n"
    ;;
  client)
    [ $# -eq 1 ] || die "client needs a COMMON-NAME"
    issue "$1" "/CN=$1" "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n"
    ;;
  *) die "unknown kind: $kind (ca, node, client)" ;;
esac
