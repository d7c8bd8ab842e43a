package io.quorumkv.service.prestop;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * The {@code preStop} hook of a QuorumKV pod in a StatefulSet: decommissions the node
 * when the StatefulSet is scaling its pod away, and only drains it otherwise. Run in the
 * image as {@code java -cp /app/quorumkv.jar io.quorumkv.service.prestop.PreStop}.
 * <p>
 * A {@code preStop} hook runs for every stop of a container (a scale-down, a rolling
 * update, an eviction, a node drain, a deleted pod) and is not told which. The
 * StatefulSet's {@code spec.replicas} (and {@code spec.ordinals.start}) say it: a pod
 * whose ordinal is outside {@code [start, start + replicas)} is being scaled away and
 * will not come back, any other pod is restarting under the same name and keeps its
 * volume, so it must stay a member. So the program:
 * <ol>
 * <li>reads the StatefulSet from the Kubernetes API ({@link StatefulSetScale}) with the
 * pod's projected service-account token, which may {@code get} that one StatefulSet
 * only;</li>
 * <li>when the pod is scaled away, asks its node's management port to decommission the
 * node and waits, bounded, until it has left ({@link NodeAdmin});</li>
 * <li>otherwise waits {@code QKV_PRESTOP_DRAIN} (5 s), so that the pod leaves the
 * Service's endpoints before SIGTERM starts the graceful shutdown.</li>
 * </ol>
 * When it cannot know (the API unreachable, a refusal such as 403, an answer that is not
 * a StatefulSet, a pod name without an ordinal) it does not decommission: a member
 * decommissioned by mistake moves its data away for nothing, a scaled-away pod left a
 * member is taken out by the operator ({@code scripts/qkv remove}). Every such path logs
 * one line saying why and what it did, and exits with status 1 (the kubelet then records
 * a {@code FailedPreStopHook} event with the output); a decision carried out exits with
 * 0.
 */
public final class PreStop {

	/** What the program did. */
	enum Outcome {

		/** Scaled away, and the node has left the cluster. */
		DECOMMISSIONED(0),

		/** Not scaled away: drained only, the node stays a member. */
		STAYED(0),

		/** The scale could not be known: drained only, not decommissioned. */
		UNDECIDED(1),

		/** Scaled away, but the decommission was not asked or did not end in time. */
		UNFINISHED(1);

		final int exitStatus;

		Outcome(int exitStatus) {
			this.exitStatus = exitStatus;
		}

	}

	private PreStop() {
	}

	public static void main(String[] args) {
		Map<String, String> env = System.getenv();
		PreStopLog log = new PreStopLog(System.out, env.get("QKV_PRESTOP_LOG"));
		System.exit(run(env, log).exitStatus);
	}

	static Outcome run(Map<String, String> env, PreStopLog log) {
		PreStopSettings settings;
		try {
			settings = PreStopSettings.from(env);
		}
		catch (IllegalArgumentException ex) {
			log.info("bad setting, " + ex.getMessage() + ": NOT decommissioning");
			StatefulSetScale.sleep(java.time.Duration.ofSeconds(5));
			return Outcome.UNDECIDED;
		}
		return run(settings, log);
	}

	static Outcome run(PreStopSettings settings, PreStopLog log) {
		long deadline = System.nanoTime() + settings.limit().toNanos();
		Integer ordinal = settings.ordinal();
		if (ordinal == null) {
			return drain(settings, log, Outcome.UNDECIDED, "pod " + settings.pod()
					+ " has no ordinal (no number after its last '-'): not a StatefulSet's pod; NOT decommissioning");
		}
		StatefulSetScale.Answer answer = new StatefulSetScale(settings, log).read();
		if (answer instanceof StatefulSetScale.Unknown unknown) {
			return drain(settings, log, Outcome.UNDECIDED, unknown.reason()
					+ ": cannot tell a scale-down from a restart; NOT decommissioning (if the StatefulSet is scaling "
					+ settings.pod() + " away, take its node out with scripts/qkv remove)");
		}
		StatefulSetScale.Known scale = (StatefulSetScale.Known) answer;
		String where = "StatefulSet " + settings.statefulSet() + " has replicas " + scale.replicas()
				+ ((scale.start() != 0) ? " from ordinal " + scale.start() : "");
		if (!scale.scalesAway(ordinal)) {
			return drain(settings, log, Outcome.STAYED, where + ": pod " + settings.pod() + " (ordinal " + ordinal
					+ ") restarts, it is not scaled away;" + " its node stays a member");
		}
		String self = settings.self();
		String key = settings.adminKey();
		if (self == null || key == null) {
			return drain(settings, log, Outcome.UNFINISHED,
					where + ": pod " + settings.pod() + " (ordinal " + ordinal + ") is scaled away, but "
							+ ((self == null) ? "QUORUMKV_CLUSTER_SELF" : "QKV_ADMIN_KEY")
							+ " is not set: NOT decommissioning; take its node out with scripts/qkv decommission"
							+ " or remove");
		}
		log.info(where + ": pod " + settings.pod() + " (ordinal " + ordinal + ") is scaled away; decommissioning "
				+ self);
		try (NodeAdmin admin = NodeAdmin.open(settings, log)) {
			return (admin.decommission(self, key, deadline) == NodeAdmin.Result.LEFT) ? Outcome.DECOMMISSIONED
					: Outcome.UNFINISHED;
		}
		catch (IOException | GeneralSecurityException ex) {
			return drain(settings, log, Outcome.UNFINISHED, "cannot read QKV_CACERT " + settings.caCert() + ": " + ex
					+ "; NOT decommissioning " + self + "; take it out with scripts/qkv decommission or remove");
		}
	}

	private static Outcome drain(PreStopSettings settings, PreStopLog log, Outcome outcome, @Nullable String message) {
		log.info(message + "; draining for " + settings.drain().toMillis() + " ms");
		StatefulSetScale.sleep(settings.drain());
		return outcome;
	}

}
