/**
 * The pre-stop program of a node in a Kubernetes StatefulSet: a pod scaled away is
 * decommissioned before it stops, a pod that only restarts is not
 * ({@link io.quorumkv.service.prestop.PreStop}, docs/kubernetes.md).
 */
@NullMarked
package io.quorumkv.service.prestop;

import org.jspecify.annotations.NullMarked;
